/* json_str.h -- names as JSON strings, for exporters that build JSON in
** memory (speedscope, heap profiles) or write it to a file (heap
** snapshots, ljm heap --json). */
#ifndef LJM_EXPORTERS_JSON_STR_H
#define LJM_EXPORTERS_JSON_STR_H

#include <stddef.h>
#include <stdio.h>

#include "exporters/common/buf.h"

/* Appends s[0..len) as a JSON string, cleaned first (valid UTF-8, no
** control characters: ljm_frame_clean); tmp is scratch. */
void ljm_json_name(LjmBuf *b, LjmBuf *tmp, const char *s, size_t len);

/* Writes the NUL-terminated s to f as a JSON string, cleaned as
** ljm_text_clean cleans (valid UTF-8, no control characters) and otherwise
** as it is (an empty string stays empty); out and tmp are scratch. */
void ljm_json_fputs(FILE *f, LjmBuf *out, LjmBuf *tmp, const char *s);

#endif
