/* json_str.c -- names as JSON strings (json_str.h). */
#include "exporters/common/json_str.h"

#include <string.h>

#include "exporters/common/frames.h"
#include "exporters/common/utf8.h"

/* Appends the cleaned text in tmp as a JSON string. */
static void put_escaped(LjmBuf *b, const LjmBuf *tmp)
{
  const char *p = tmp->p ? tmp->p : "";
  size_t run = 0, n = tmp->len;
  ljm_buf_putc(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c != '"' && c != '\\' && c >= 0x20) continue;
    ljm_buf_put(b, p + run, i - run);
    if (c == '"' || c == '\\') {
      ljm_buf_putc(b, '\\');
      ljm_buf_putc(b, (char)c);
    } else {
      ljm_buf_printf(b, "\\u%04x", c);
    }
    run = i + 1;
  }
  ljm_buf_put(b, p + run, n - run);
  ljm_buf_putc(b, '"');
}

void ljm_json_name(LjmBuf *b, LjmBuf *tmp, const char *s, size_t len)
{
  ljm_buf_reset(tmp);
  ljm_frame_clean(tmp, s, len, 0);
  put_escaped(b, tmp);
}

void ljm_json_fputs(FILE *f, LjmBuf *out, LjmBuf *tmp, const char *s)
{
  ljm_buf_reset(tmp);
  ljm_buf_reset(out);
  ljm_text_clean(tmp, s, strlen(s), 0, LJM_CLEAN_NO_CAP);
  put_escaped(out, tmp);
  fwrite(out->p, 1, out->len, f);
}
