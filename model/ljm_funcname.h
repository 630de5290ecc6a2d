/* ljm_funcname.h -- internal: the name a Lua function's source gives it.
**
** LuaJIT records where a function is defined (chunk, line of its 'function'
** keyword), not what it is called. The definition line usually says:
**
**   function NAME(          NAME := Name {'.' Name} [':' Name]
**   local function NAME(
**   LHS = function(         LHS  := ['local'] Name {'.' Name | '[' string ']'}
**   NAME = function(           (also a field in a table constructor)
**
** Anything else (return function(, an argument, two functions on one line)
** is anonymous. Strings and comments on the line are skipped.
*/
#ifndef LJM_FUNCNAME_H
#define LJM_FUNCNAME_H

#include <stddef.h>

#define LJM_FUNCNAME_MAX 200  /* longer names are not names */

/* Parses one definition line. Writes the name (NUL-terminated, at most
** LJM_FUNCNAME_MAX bytes) to out and returns its length; 0 when the line
** defines exactly one function and it is anonymous, or when the line does
** not define exactly one function. */
size_t ljm_funcname_parse(const char *line, size_t len, char out[LJM_FUNCNAME_MAX + 1]);

#endif
