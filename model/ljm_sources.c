/* ljm_sources.c -- source text of Lua chunks, read once, for function names.
**
** A chunk named "@path" is the file path as the program loaded it: it is
** looked up as given (relative to the current directory), then under each
** source directory, first as the whole path, then without its leading
** directories one at a time ("/srv/app/lib/cache.lua" under DIR tries
** DIR/srv/app/lib/cache.lua, DIR/app/lib/cache.lua, DIR/lib/cache.lua,
** DIR/cache.lua), and a relative path last beside the profile itself. A
** chunk without '@' or '=' is its own source text
** (loadstring). Files larger than SRC_MAX_BYTES are not read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/ljm_model_int.h"

#define SRC_MAX_BYTES (64u << 20)

int ljm_model_set_sources(LjmModel *m, const char *const *dirs, size_t ndirs)
{
  char **d = ndirs ? calloc(ndirs, sizeof(*d)) : NULL;
  if (ndirs && !d) return -1;
  for (size_t i = 0; i < ndirs; i++)
    if (!(d[i] = strdup(dirs[i]))) {
      while (i--) free(d[i]);
      free(d);
      return -1;
    }
  ljm_sources_free(m);
  m->src_dirs = d;
  m->nsrc_dirs = ndirs;
  m->use_sources = 1;
  return 0;
}

void ljm_sources_free(LjmModel *m)
{
  for (size_t i = 0; i < m->nsrc_dirs; i++) free(m->src_dirs[i]);
  free(m->src_dirs);
  for (uint32_t i = 0; i < m->nsrcs; i++) {
    if (m->srcs[i].owned) free(m->srcs[i].text);
    free(m->srcs[i].lines);
  }
  free(m->srcs);
  m->src_dirs = NULL;
  m->nsrc_dirs = 0;
  m->srcs = NULL;
  m->nsrcs = m->capsrcs = 0;
}

/* Whole file at path, if it is a regular file of a sane size. */
static char *slurp(const char *path, size_t *len)
{
  struct stat st;
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  if (!f) return NULL;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
      (uint64_t)st.st_size <= SRC_MAX_BYTES && (buf = malloc((size_t)st.st_size + 1))) {
    *len = fread(buf, 1, (size_t)st.st_size, f);
    buf[*len] = '\0';
  }
  fclose(f);
  return buf;
}

/* Tries dir/rel for dir NULL (rel as given) or a source directory. */
static char *try_path(const char *dir, const char *rel, size_t *len)
{
  if (!dir) return slurp(rel, len);
  size_t dl = strlen(dir), rl = strlen(rel);
  char *p = malloc(dl + rl + 2);
  if (!p) return NULL;
  memcpy(p, dir, dl);
  p[dl] = '/';
  memcpy(p + dl + 1, rel, rl + 1);
  char *text = slurp(p, len);
  free(p);
  return text;
}

static char *find_file(const LjmModel *m, const char *path, size_t *len)
{
  char *text = try_path(NULL, path, len);
  for (size_t i = 0; !text && i < m->nsrc_dirs; i++) {
    for (const char *rel = path; !text && rel; rel = strchr(rel, '/')) {
      while (*rel == '/') rel++;
      if (*rel) text = try_path(m->src_dirs[i], rel, len);
    }
  }
  /* A relative path beside the profile: it is usually written where the
  ** program ran, so a conversion elsewhere names functions alike. */
  const char *prof = m->info.path, *slash = prof ? strrchr(prof, '/') : NULL;
  if (!text && path[0] != '/' && slash && slash - prof < 4096) {
    char dir[4096];
    memcpy(dir, prof, (size_t)(slash - prof));
    dir[slash - prof] = '\0';
    text = try_path(slash == prof ? "" : dir, path, len);
  }
  return text;
}

/* Line offsets of text (line i starts at lines[i - 1]). */
static int index_lines(SrcText *s)
{
  uint32_t n = 1, cap = 64;
  s->lines = malloc(cap * sizeof(*s->lines));
  if (!s->lines) return -1;
  s->lines[0] = 0;
  for (size_t i = 0; i < s->len && i < UINT32_MAX; i++) {
    if (s->text[i] != '\n') continue;
    if (n == cap) {
      uint32_t *l = realloc(s->lines, (size_t)cap * 2 * sizeof(*l));
      if (!l) return -1;
      s->lines = l;
      cap *= 2;
    }
    s->lines[n++] = (uint32_t)(i + 1);
  }
  s->nlines = n;
  return 0;
}

/* The cached source of a chunk (strtab id), read on first use. */
static const SrcText *source_of(LjmModel *m, uint32_t chunk)
{
  uint32_t i = ljm_hmap_get(&m->src_by_chunk, chunk);
  if (i != NONE) return &m->srcs[i];
  if (m->nsrcs == m->capsrcs) {
    SrcText *s = ljm_model_grow(m, m->srcs, &m->capsrcs, sizeof(*s));
    if (!s) return NULL;
    m->srcs = s;
  }
  SrcText *s = &m->srcs[m->nsrcs];
  memset(s, 0, sizeof(*s));
  const LjmStrEntry *e = ljm_strtab_get(&m->str, chunk);
  if (e->len && e->s[0] == '@' && !memchr(e->s, '\0', e->len)) {
    s->text = find_file(m, e->s + 1, &s->len);
    s->owned = 1;
    if (!s->text && !m->src_missing++) m->src_missing_example = e->s + 1;
  } else if (e->len && e->s[0] != '=') {
    s->text = (char *)e->s;  /* the strtab keeps it for the model's life */
    s->len = e->len;
  }
  if (s->text && index_lines(s) != 0) {
    if (s->owned) free(s->text);
    free(s->lines);
    memset(s, 0, sizeof(*s));
  }
  if (ljm_hmap_put(&m->src_by_chunk, chunk, m->nsrcs) != 0) {
    m->oom = 1;
    if (s->owned) free(s->text);
    free(s->lines);
    return NULL;
  }
  return &m->srcs[m->nsrcs++];
}

const char *ljm_sources_line(LjmModel *m, uint32_t chunk, uint64_t line, size_t *len)
{
  if (!m->use_sources || line == 0) return NULL;
  const SrcText *s = source_of(m, chunk);
  if (!s || !s->text || line > s->nlines) return NULL;
  size_t a = s->lines[line - 1];
  size_t b = line < s->nlines ? s->lines[line] : s->len;
  *len = b - a;
  return s->text + a;
}

int ljm_sources_readable(LjmModel *m, uint32_t chunk)
{
  if (!m->use_sources) return 0;
  const SrcText *s = source_of(m, chunk);
  return s && s->text;
}

uint32_t ljm_model_sources_missing(const LjmModel *m, const char **example)
{
  if (example) *example = m->src_missing ? m->src_missing_example : NULL;
  return m->src_missing;
}
