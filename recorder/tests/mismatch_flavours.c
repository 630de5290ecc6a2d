/* mismatch_flavours.c -- mismatch_test's only flavour: Debian's luajit
** headers configured without GC64 (rec_flavours.c lists the real ones). */
#include "recorder/rec_flavour.h"

extern const RecFlavour rec_flavour_luajit;

const RecFlavour *const rec_flavours[] = {&rec_flavour_luajit, NULL};
