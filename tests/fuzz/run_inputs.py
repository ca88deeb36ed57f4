"""Runs a libFuzzer binary once over every file of a directory, continuing
past the inputs that fail; prints each failing file with the sanitizer's
or libFuzzer's summary and exits 1 if there was any.

Usage: run_inputs.py FUZZER_BINARY DIR [FUZZER_FLAG...]
"""
import os
import subprocess
import sys

BATCH = 200


def main():
    binary, directory, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    files = sorted(os.path.join(directory, f) for f in os.listdir(directory))
    failed = []
    i = 0
    while i < len(files):
        batch = files[i:i + BATCH]
        p = subprocess.run([binary] + flags + batch, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode == 0:
            i += len(batch)
            continue
        out = p.stdout.decode(errors='replace').splitlines()
        ran = [l[len('Running: '):] for l in out if l.startswith('Running: ')]
        bad = ran[-1] if ran else batch[0]
        why = [l for l in out if 'SUMMARY' in l or 'runtime error' in l]
        print('%s: %s' % (bad, ' | '.join(why[:2]) or 'exit %d' % p.returncode),
              flush=True)
        failed.append(bad)
        i = files.index(bad) + 1
    print('%d inputs, %d failed' % (len(files), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
