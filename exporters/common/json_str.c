/* json_str.c -- names as JSON strings (json_str.h). */
#include "exporters/common/json_str.h"

#include "exporters/common/frames.h"

void ljm_json_name(LjmBuf *b, LjmBuf *tmp, const char *s, size_t len)
{
  ljm_buf_reset(tmp);
  ljm_frame_clean(tmp, s, len, 0);
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
