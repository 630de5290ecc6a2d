/* utf8.h -- UTF-8 decoding and name cleaning shared by the exporters.
**
** Names in a profile are raw bytes (chunk names, C symbols). Every format
** needs valid UTF-8 without control characters; some need more (folded
** stacks: no ';'; pprof and heaptrack: no '<' '>', a length cap).
** ljm_text_clean does all of it in one pass.
*/
#ifndef LJM_EXPORTERS_UTF8_H
#define LJM_EXPORTERS_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "exporters/common/buf.h"

#define LJM_UTF8_BAD 0xFFFFFFFFu  /* code point returned for an invalid byte */

/* Decodes one code point of s[0..len) (len > 0) into *cp and returns the
** bytes it used. An invalid, overlong, surrogate or cut sequence gives
** LJM_UTF8_BAD and uses 1 byte, so decoding always advances. */
size_t ljm_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

/* Flags of ljm_text_clean. */
#define LJM_CLEAN_FOLDED 1u    /* also ';' -> ':' and non-ASCII spaces -> '_' */
#define LJM_CLEAN_BRACKETS 2u  /* also '<' '>' -> '(' ')': pprof and heaptrack
                               ** shorten C++ templates by removing between them */
#define LJM_CLEAN_SPACE 4u     /* control characters are C0 and DEL only and
                               ** become ' '; U+FFFE/U+FFFF stay (the rules
                               ** pprof and heaptrack names have always had) */
#define LJM_CLEAN_NO_CAP SIZE_MAX  /* max of ljm_text_clean: no length cap */

/* Appends a cleaned copy of s[0..len) to b: invalid bytes and U+FFFE/U+FFFF
** become U+FFFD, control characters (C0, DEL, C1; so also NUL, tab and
** newlines) become '_'. The result is valid UTF-8 and valid XML text.
** When len > max, s is cut to at most max bytes at a character boundary
** and "..." is appended (one-line chunks can be kilobytes long). */
void ljm_text_clean(LjmBuf *b, const char *s, size_t len, unsigned flags,
                    size_t max);

#endif
