#!/usr/bin/env python3
"""estimator_sim.py -- the bias and spread of ljm growth's slope on a sampled
recording, simulated: a leak sampled as a Poisson count (rate per second),
seen as ljm growth sees it (the least count in each bucket, model/ljm_growth.c)
and fitted by Theil-Sen (the median of the slopes between every pair of
points). Prints, per sampling rate, the mean and the standard deviation of
slope / true rate over TRIALS trials.

usage: python3 bench/growth/estimator_sim.py [TRIALS] [SECONDS] [BUCKET_S]
       (default 400 trials of 18 s in 0.8 s buckets: growth_nginx_test's)"""
import random
import statistics
import sys

trials = int(sys.argv[1]) if len(sys.argv) > 1 else 400
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 18.0
bucket = float(sys.argv[3]) if len(sys.argv) > 3 else 0.8


def theil_sen(t, v):
    s = sorted((v[j] - v[i]) / (t[j] - t[i]) for i in range(len(t)) for j in range(i + 1, len(t)))
    m = len(s)
    return s[m // 2] if m % 2 else (s[m // 2 - 1] + s[m // 2]) / 2


random.seed(1)
n = int(seconds / bucket) + 1
t = [min((j + 1) * bucket, seconds) for j in range(n)]
print("samples/s  samples  mean(slope/true)  sd")
for rate in (2, 3.5, 6.5, 12, 50):
    ratios = []
    for _ in range(trials):
        events, x = [], 0.0
        while True:
            x += random.expovariate(rate)
            if x > seconds:
                break
            events.append(x)
        # A leak only grows: a bucket's least count is its count at the start.
        v = [sum(1 for e in events if e < j * bucket) for j in range(n)]
        ratios.append(theil_sen(t, v) / rate)
    print("%9.1f  %7.0f  %16.3f  %.3f" % (rate, rate * seconds, statistics.mean(ratios),
                                           statistics.stdev(ratios)))
