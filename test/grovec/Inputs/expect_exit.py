"""Runs a command and checks its exit status.

usage: expect_exit.py STATUS COMMAND [ARGS...]

Passes the command's stdout and stderr through. Exits 0 if the command
exited with STATUS, else 1 with a message on stderr; a command killed by a
signal (a crash) always fails, whatever STATUS is. lit's internal shell has
no `$?`, and `not` only tells zero from non-zero: grovec's 1 (bad input) and
2 (bad usage) must be told apart.
"""

import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    want = int(sys.argv[1])
    sys.stdout.flush()
    try:
        got = subprocess.call(sys.argv[2:])
    except OSError as e:
        sys.stderr.write("expect_exit: cannot run %s: %s\n" % (sys.argv[2], e))
        return 1
    if got < 0:
        sys.stderr.write("expect_exit: %s was killed by signal %d\n"
                         % (sys.argv[2], -got))
        return 1
    if got != want:
        sys.stderr.write("expect_exit: %s exited %d, expected %d\n"
                         % (sys.argv[2], got, want))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
