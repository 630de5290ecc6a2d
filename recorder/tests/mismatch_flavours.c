/* mismatch_flavours.c -- mismatch_test's only flavour: Debian's luajit
** headers configured without GC64 (api/flavours.c lists the real ones). */
#include "recorder/capture/flavour.h"

extern const RecFlavour rec_flavour_luajit;

const RecFlavour *const rec_flavours[] = {&rec_flavour_luajit, NULL};
