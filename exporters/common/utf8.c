/* utf8.c -- UTF-8 decoding and name cleaning shared by the exporters. */
#include "exporters/common/utf8.h"

size_t ljm_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
  unsigned c = s[0];
  size_t n;
  uint32_t v, min;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1F; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0F; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07; min = 0x10000; }
  else { *cp = LJM_UTF8_BAD; return 1; }
  if (len < n) { *cp = LJM_UTF8_BAD; return 1; }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) { *cp = LJM_UTF8_BAD; return 1; }
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
    *cp = LJM_UTF8_BAD;
    return 1;
  }
  *cp = v;
  return n;
}

/* Whitespace that Perl's \s matches beyond ASCII (flamegraph.pl reads its
** input as UTF-8, so these could split a count off a frame name). */
static int is_unicode_space(uint32_t cp)
{
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

void ljm_text_clean(LjmBuf *b, const char *s, size_t len, unsigned flags,
                    size_t max)
{
  const unsigned char *p = (const unsigned char *)s;
  int cut = len > max;
  if (cut) {  /* back to the start of the character at s[max] */
    len = max;
    while (len > 0 && (p[len] & 0xC0) == 0x80) len--;
  }
  int space = (flags & LJM_CLEAN_SPACE) != 0;
  size_t i = 0, run = 0;  /* run: start of bytes copied unchanged */
  while (i < len) {
    uint32_t cp;
    size_t n = ljm_utf8_decode(p + i, len - i, &cp);
    const char *rep = NULL;
    if (cp == LJM_UTF8_BAD || (!space && (cp == 0xFFFE || cp == 0xFFFF)))
      rep = "\xEF\xBF\xBD";
    else if (cp < 0x20 || cp == 0x7F)
      rep = space ? " " : "_";
    else if (!space && cp >= 0x80 && cp <= 0x9F)
      rep = "_";
    else if ((flags & LJM_CLEAN_BRACKETS) && (cp == '<' || cp == '>'))
      rep = cp == '<' ? "(" : ")";
    else if ((flags & LJM_CLEAN_FOLDED) && cp == ';')
      rep = ":";
    else if ((flags & LJM_CLEAN_FOLDED) && is_unicode_space(cp))
      rep = "_";
    if (rep) {
      ljm_buf_put(b, s + run, i - run);
      ljm_buf_puts(b, rep);
      run = i + n;
    }
    i += n;
  }
  ljm_buf_put(b, s + run, len - run);
  if (cut) ljm_buf_puts(b, "...");
}
