/* options.c -- a recording's options (LjmRecOptions), checked before anything starts. */
#include "recorder/capture/session.h"

#include <errno.h>
#include <string.h>

#define REC_FLUSH_MS_MAX (24u * 3600u * 1000u)

/* Options: 0, or EINVAL with the reason. */
REC_API int take_options(LjmRecorder *r, const LjmRecOptions *opt, LjmRecError *err)
{
  r->wtimeout_ms = LJM_REC_WRITE_TIMEOUT_MS;
  if (!opt) return 0;
  if (opt->write_timeout_ms == LJM_REC_WAIT_FOREVER)
    r->wtimeout_ms = REC_FDOUT_FOREVER;
  else if (opt->write_timeout_ms > REC_FLUSH_MS_MAX)
    return set_err(err, EINVAL, "write timeout must be at most %s (or LJM_REC_WAIT_FOREVER)", "1 day");
  else if (opt->write_timeout_ms)
    r->wtimeout_ms = opt->write_timeout_ms;
  if (opt->flush_ms > REC_FLUSH_MS_MAX)
    return set_err(err, EINVAL, "flush interval must be at most %s", "1 day");
  r->flush_ms = opt->flush_ms;
  if (opt->sample > REC_SAMPLE_MAX)
    return set_err(err, EINVAL, "sampling rate must be 1..%s bytes", "2^30");
  if (opt->seed && !opt->sample)
    return set_err(err, EINVAL, "%s", "a seed needs sampling");
  if (opt->sample && R.nlive)
    return set_err(err, EBUSY, "%s", "a sampled recording runs alone: another recording of this Lua state is running");
  r->sample = opt->sample;
  r->seed = opt->seed;
  r->timed = opt->stacks || opt->time || opt->sample;
  if (!opt->stacks) {
    if (opt->stack_depth)
      return set_err(err, EINVAL, "%s", "a stack depth needs stacks");
    return 0;
  }
  if (opt->stack_depth > REC_STACK_DEPTH_MAX)
    return set_err(err, EINVAL, "stack depth must be 1..%s", "65535");
  r->ext = 1;
  r->depth = opt->stack_depth ? opt->stack_depth : REC_STACK_DEPTH_DEFAULT;
  return 0;
}

REC_API int check_options(const LjmRecOptions *opt, LjmRecError *err)
{
  LjmRecorder tmp;
  memset(&tmp, 0, sizeof(tmp));
  return take_options(&tmp, opt, err);
}
