/* funcname_test.c -- function names from definition lines: every form the
** parser names, the anonymous and ambiguous ones it must not, and a source
** file read through the model (sources on and off). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder/tests/check.h"
#include "decoder/tests/stream_builder.h"
#include "model/ljm_funcname.h"
#include "model/ljm_model_load.h"

static const char *const cases[][2] = {
  { "function Cache:put(key, value)", "Cache:put" },
  { "local function serialize(v)", "serialize" },
  { "M.put = function(self, x)", "M:put" },  /* self first: a method */
  { "local f = function(x)", "f" },
  { "function a.b.c(x)", "a.b.c" },
  { "\tput = function (self)", "put" },
  { "  [\"get\"] = function(self)", "get" },
  { "M.handlers[\"get\"] = function(req)", "M.handlers.get" },  /* as the recorder spells it */
  { "M.handlers['do'] = function(req)", "M.handlers[\"do\"]" },
  /* 'self' first: a method, as the bytecode names it */
  { "function M.f(self, x)", "M:f" },
  { "M.g = function(self)", "M:g" },
  { "M[\"do\"] = function(self)", "M[\"do\"]" },
  { "local h = function(self)", "h" },
  { "setmetatable(t, {__index = function(t, k)", "__index" },
  { "function M.new(o) -- function x()", "M.new" },
  { "local s = [[ function f() ]] local g = function()", "g" },
  { "local s = '\\' function' local h = function()", "h" },
  /* anonymous, ambiguous or not a definition: no name */
  { "return function(x)", "" },
  { "table.sort(t, function(a, b) return a < b end)", "" },
  { "local f = function() return function() end end", "" },
  { "register(\"function\", function(x)", "" },
  { "x = 1 -- function f()", "" },
  { "if a == function() end then", "" },
  { "function(x)", "" },
  { "function end(x)", "" },
  { "a.function = function()", "" },
  { "", "" },
};

static void parse_cases(void)
{
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[LJM_FUNCNAME_MAX + 1];
    size_t n = ljm_funcname_parse(cases[i][0], strlen(cases[i][0]), out);
    CHECK(n == strlen(cases[i][1]) && strcmp(out, cases[i][1]) == 0);
    if (strcmp(out, cases[i][1]) != 0)
      fprintf(stderr, "  %s -> '%s', want '%s'\n", cases[i][0], out, cases[i][1]);
  }
  char longname[400], out[LJM_FUNCNAME_MAX + 1];
  memset(longname, 'x', sizeof(longname));
  memcpy(longname, "function ", 9);
  strcpy(longname + 300, "()");
  CHECK(ljm_funcname_parse(longname, strlen(longname), out) == 0);  /* too long */
}

/* A profile of three sites in "@fn_src.lua" (main chunk, a named and an
** anonymous function), loaded with and without sources. */
static void through_model(void)
{
  const char *src = "local M = {}\n"
                    "function M.grow(t)\n"
                    "  t[#t + 1] = {}\n"
                    "end\n"
                    "return function() end\n";
  FILE *f = fopen("fn_src.lua", "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(src, f);
  fclose(f);
  Sbuf b = { 0 };
  sb_prologue(&b, "ljs", 3);
  sb_byte(&b, 0x80);
  sb_prologue(&b, "ljm", 3);
  sb_proto(&b, 0x08, 0x100, "@fn_src.lua", 0);
  sb_proto(&b, 0x08, 0x200, "@fn_src.lua", 2);
  sb_proto(&b, 0x08, 0x300, "@fn_src.lua", 5);
  sb_alloc_lua(&b, 0x100, 5, 0x1000, 8);
  sb_alloc_lua(&b, 0x200, 3, 0x2000, 8);
  sb_alloc_lua(&b, 0x300, 5, 0x3000, 8);
  sb_byte(&b, 0x80);
  for (int sources = 0; sources < 2; sources++) {
    LjmModel *m = ljm_model_new();
    if (sources) CHECK(ljm_model_set_sources(m, NULL, 0) == 0);
    LjmInput *in = ljm_input_mem(b.p, b.n);
    LjmDiag d;
    CHECK(ljm_model_load(m, in, "mem", &d) == LJM_OK);
    CHECK(ljm_model_nsites(m) == 3);
    if (ljm_model_nsites(m) == 3) {
      const LjmSite *s0 = ljm_model_site(m, 0), *s1 = ljm_model_site(m, 1),
                    *s2 = ljm_model_site(m, 2);
      CHECK(strcmp(s0->func, "main chunk") == 0 && s0->func_from == LJM_FUNC_MAIN);
      CHECK(strcmp(s0->file, "fn_src.lua") == 0 && s0->line == 5);
      if (sources) {
        CHECK(strcmp(s1->func, "M.grow") == 0 && s1->func_from == LJM_FUNC_SOURCE);
        CHECK(s2->func_from == LJM_FUNC_ANONYMOUS);
      } else {
        CHECK(s1->func_from == LJM_FUNC_UNKNOWN && s2->func_from == LJM_FUNC_UNKNOWN);
        CHECK(strcmp(s1->func, "function <fn_src.lua:2>") == 0);
      }
      CHECK(strcmp(s2->func, "function <fn_src.lua:5>") == 0);
      /* The text report's names do not change. */
      CHECK(strcmp(s1->name, "@fn_src.lua:3") == 0);
    }
    ljm_input_close(in);
    ljm_model_free(m);
  }
  free(b.p);
  unlink("fn_src.lua");
}

int main(void)
{
  parse_cases();
  through_model();
  return check_done("funcname_test");
}
