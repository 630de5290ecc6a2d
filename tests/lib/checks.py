"""checks.py -- the one check/report helper of the tests: counts checks,
keeps the failed ones, and ends a test with its tally and exit status.

A test keeps the output it always printed; what differs is when a failure
is printed and which tally ends the run:

  Checks(name)                   the ljm command-line tests: failures at the
                                 end ("FAIL what"), then done(minimum):
                                 "NAME: N checks, M failures"
  Checks(name, echo=RECORDER)    the recorder's tests: "FAIL NAME: what" as
                                 it happens, then finish(): "P passed, F
                                 failed" and exit (fails with no check)
  export_testlib.CHECKS          the exporter tests: "FAIL: what" on stderr
                                 as it happens, then finish_checked(name,
                                 ran) or summary()

A check returns its condition as given (truthy when it held), so a test
can go on with what it checked.
"""
import sys

RECORDER = "FAIL {name}: {what}"   # echo of the recorder's tests (stdout)
EXPORTER = "FAIL: {what}"          # echo of the exporter tests (stderr)


class Checks:
    """Counts checks and collects the failed ones."""

    def __init__(self, name="", echo=None, file=None):
        self.name = name
        self.passed = 0
        self.failures = []
        self.echo = echo      # format of a failure printed when it happens
        self.file = file      # where it goes (None: stdout)

    @property
    def count(self):
        return self.passed + len(self.failures)

    @property
    def failed(self):
        return len(self.failures)

    def __call__(self, cond, what):
        """Counts one check; returns cond (truthy when it held)."""
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
            if self.echo:
                print(self.echo.format(name=self.name, what=what), file=self.file or sys.stdout)
        return cond

    check = __call__

    def done(self, minimum=1):
        """Prints the failures and the tally; returns the exit status
        (1 on a failure or fewer than minimum checks)."""
        for f in self.failures:
            print("FAIL", f)
        print("%s: %d checks, %d failures" % (self.name, self.count, len(self.failures)))
        return 1 if self.failures or self.count < minimum else 0

    def finish(self):
        """Prints "P passed, F failed" and exits: 1 on a failure or when
        nothing was checked."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed or not self.passed else 0)

    def finish_checked(self, name, ran):
        """Prints "NAME: RAN checked, F failures" (ran: the profiles
        checked) and exits: 1 on a failure or when ran is 0."""
        if ran == 0:
            self.failures.append("no profile was checked")
        print("%s: %d checked, %d failures" % (name, ran, len(self.failures)))
        sys.exit(1 if self.failures else 0)

    def summary(self):
        """Prints "P passed, F failed"; returns the exit status (1 on a
        failure)."""
        print("%d passed, %d failed" % (self.passed, len(self.failures)))
        return 1 if self.failures else 0
