/* ljm_funcname.c -- the name a Lua function's definition line gives it. */
#include "model/ljm_funcname.h"

#include <string.h>

typedef enum { T_NAME, T_STR, T_PUNCT, T_OTHER } TokType;

typedef struct Tok {
  TokType type;
  const char *s;
  size_t len;
} Tok;

#define MAXTOK 256

static int ident_start(unsigned char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static int ident_char(unsigned char c)
{
  return ident_start(c) || (c >= '0' && c <= '9');
}

/* Length of a long bracket opener "[", "=" * level, "[" at p, or 0. */
static size_t long_open(const char *p, const char *end, size_t *level)
{
  const char *q = p + 1;
  if (p >= end || *p != '[') return 0;
  while (q < end && *q == '=') q++;
  if (q >= end || *q != '[') return 0;
  *level = (size_t)(q - p - 1);
  return (size_t)(q - p + 1);
}

/* End of a long string/comment of 'level' starting at p, or end. */
static const char *long_close(const char *p, const char *end, size_t level)
{
  for (; p < end; p++) {
    if (*p != ']') continue;
    const char *q = p + 1;
    size_t n = 0;
    while (q < end && *q == '=' && n < level) q++, n++;
    if (n == level && q < end && *q == ']') return q + 1;
  }
  return end;
}

/* Splits a line into tokens, strings and comments skipped or kept whole. */
static size_t tokenize(const char *p, size_t len, Tok *t)
{
  const char *end = p + len;
  size_t n = 0, lv;
  while (p < end && n < MAXTOK) {
    unsigned char c = (unsigned char)*p;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
      p++;
    } else if (c == '-' && p + 1 < end && p[1] == '-') {  /* comment */
      size_t o = long_open(p + 2, end, &lv);
      if (!o) break;  /* to the end of the line */
      p = long_close(p + 2 + o, end, lv);
    } else if (ident_start(c)) {
      const char *s = p;
      while (p < end && ident_char((unsigned char)*p)) p++;
      t[n++] = (Tok){ T_NAME, s, (size_t)(p - s) };
    } else if (c == '"' || c == '\'') {
      const char *s = p++;
      while (p < end && *p != (char)c) p += *p == '\\' && p + 1 < end ? 2 : 1;
      if (p < end) p++;
      t[n++] = (Tok){ T_STR, s, (size_t)(p - s) };
    } else if (c == '[' && long_open(p, end, &lv)) {
      const char *s = p;
      p = long_close(p + long_open(p, end, &lv), end, lv);
      t[n++] = (Tok){ T_STR, s, (size_t)(p - s) };
    } else if (c >= '0' && c <= '9') {
      const char *s = p;
      while (p < end && (ident_char((unsigned char)*p) || *p == '.')) p++;
      t[n++] = (Tok){ T_OTHER, s, (size_t)(p - s) };
    } else {
      /* Two-character operators that contain '=' must not read as '='. */
      size_t l = p + 1 < end && p[1] == '=' && strchr("=~<>", c) ? 2 : 1;
      if (c == '.' && p + 1 < end && p[1] == '.') l = 2;
      t[n++] = (Tok){ T_PUNCT, p, l };
      p += l;
    }
  }
  return n;
}

static int is(const Tok *t, const char *s)
{
  size_t l = strlen(s);
  return t->len == l && memcmp(t->s, s, l) == 0;
}

static int is_keyword(const Tok *t)
{
  static const char *const kw[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
    "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
    "true", "until", "while", NULL };
  for (const char *const *k = kw; *k; k++)
    if (is(t, *k)) return 1;
  return 0;
}

static int name_tok(const Tok *t) { return t->type == T_NAME && !is_keyword(t); }

/* Copies tokens a..b (inclusive) without spaces into out; 0 if too long. */
/* Is s (len bytes) a Name, not a reserved word? */
static int plain_name(const char *s, size_t len)
{
  static const char *const reserved[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
    "in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"};
  if (!len || !ident_start((unsigned char)s[0])) return 0;
  for (size_t i = 1; i < len; i++)
    if (!ident_char((unsigned char)s[i])) return 0;
  for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
    if (strlen(reserved[i]) == len && !memcmp(reserved[i], s, len)) return 0;
  return 1;
}

static int put(char *out, size_t *n, const char *s, size_t len)
{
  if (*n + len > LJM_FUNCNAME_MAX) return 0;
  memcpy(out + *n, s, len);
  *n += len;
  return 1;
}

/* Tokens a..b joined, an index by a string written the way the recorder
** writes it (recorder/vm/func_names.c): t["x"] as t.x, t['do'] as t["do"]. */
static size_t join(const Tok *t, size_t a, size_t b, char *out)
{
  size_t n = 0;
  for (size_t i = a; i <= b; i++) {
    if (is(&t[i], "[") && i + 2 <= b && t[i + 1].type == T_STR && is(&t[i + 2], "]") &&
        t[i + 1].len >= 2 && (t[i + 1].s[0] == '"' || t[i + 1].s[0] == '\'')) {
      const char *k = t[i + 1].s + 1;
      size_t kl = t[i + 1].len - 2;
      if (memchr(k, '\\', kl)) return 0;  /* escapes: not spelled alike */
      if (plain_name(k, kl) ? !put(out, &n, ".", 1) || !put(out, &n, k, kl)
                            : !put(out, &n, "[\"", 2) || !put(out, &n, k, kl) ||
                                  !put(out, &n, "\"]", 2))
        return 0;
      i += 2;
      continue;
    }
    if (!put(out, &n, t[i].s, t[i].len)) return 0;
  }
  out[n] = '\0';
  return n;
}

/* A function whose first parameter is 'self' (t[paren + 1]) is a method,
** as the recorder names it from the bytecode, which cannot tell
** `function M.f(self)` from `function M:f()`: "M.f" becomes "M:f". */
static size_t as_method(const Tok *t, size_t n, size_t paren, char *out, size_t len)
{
  if (!len || paren + 1 >= n || !is(&t[paren + 1], "self") || memchr(out, ':', len)) return len;
  char *dot = NULL;
  for (size_t i = 0; i < len; i++)
    if (out[i] == '.') dot = out + i;
    else if (out[i] == ']') dot = NULL;
  if (dot) *dot = ':';
  return len;
}

size_t ljm_funcname_parse(const char *line, size_t len, char out[LJM_FUNCNAME_MAX + 1])
{
  Tok t[MAXTOK];
  size_t n = tokenize(line, len, t), k = n, count = 0;
  out[0] = '\0';
  for (size_t i = 0; i < n; i++)
    if (t[i].type == T_NAME && is(&t[i], "function")) k = i, count++;
  if (count != 1 || k + 1 >= n) return 0;

  if (name_tok(&t[k + 1])) {  /* function a.b.c:m( */
    size_t i = k + 1;
    while (i + 2 < n && is(&t[i + 1], ".") && name_tok(&t[i + 2])) i += 2;
    if (i + 2 < n && is(&t[i + 1], ":") && name_tok(&t[i + 2])) i += 2;
    if (i + 1 < n && is(&t[i + 1], "(")) return as_method(t, n, i + 1, out, join(t, k + 1, i, out));
    return 0;
  }
  if (!is(&t[k + 1], "(") || k < 2 || !is(&t[k - 1], "=")) return 0;
  /* LHS = function(: walk the left-hand side back from before '='. Each
  ** step takes a Name or a ["string"] index; a Name needs a '.' before it
  ** to go on, an index may follow a Name or another index directly. */
  size_t first = k - 1, i = k - 2;
  for (;;) {
    int indexed = 0;
    if (name_tok(&t[i])) {
      first = i;
    } else if (is(&t[i], "]") && i >= 2 && t[i - 1].type == T_STR && is(&t[i - 2], "[")) {
      first = i - 2;
      indexed = 1;
    } else {
      break;
    }
    if (first >= 2 && is(&t[first - 1], ".")) {
      i = first - 2;
    } else if (indexed && first >= 1 && (name_tok(&t[first - 1]) || is(&t[first - 1], "]"))) {
      i = first - 1;
    } else {
      break;
    }
  }
  if (first == k - 1 || !name_tok(&t[first])) {
    /* ["key"] = function( in a table constructor: the key is the name. */
    if (first < k - 1 && is(&t[first], "[") && first + 3 == k - 1) {
      const Tok *s = &t[first + 1];
      if (s->len >= 2 && (s->s[0] == '"' || s->s[0] == '\'') && s->len - 2 <= LJM_FUNCNAME_MAX) {
        memcpy(out, s->s + 1, s->len - 2);
        out[s->len - 2] = '\0';
        return s->len - 2;
      }
    }
    return 0;
  }
  return as_method(t, n, k + 1, out, join(t, first, k - 2, out));
}
