/* json_str.h -- names as JSON strings, for exporters that build JSON in
** memory (speedscope, heap profiles). */
#ifndef LJM_EXPORTERS_JSON_STR_H
#define LJM_EXPORTERS_JSON_STR_H

#include <stddef.h>

#include "exporters/common/buf.h"

/* Appends s[0..len) as a JSON string, cleaned first (valid UTF-8, no
** control characters: ljm_frame_clean); tmp is scratch. */
void ljm_json_name(LjmBuf *b, LjmBuf *tmp, const char *s, size_t len);

#endif
