"""python -m samebits: the CLI's commands that need no data files, over the same
library (version, doctor, verify, fixture list/run, card diff).

Exit status as the CLI's: 0 success, 1 a difference was found, 2 an error."""
import argparse
import os
import sys

import samebits
from ._model import Card, fixture_names

EXIT_DIFF, EXIT_ERROR = 1, 2


def _run_fixture(name):
    card = Card()
    card.set_meta("arch", samebits.build_info().get("arch", "unknown"))
    card.set_meta("threads", samebits.get_num_threads())
    from ._lib import check, lib
    check(lib.sb_fixture_run(name.encode(), card._h.ptr))
    return card


def _print_diff(d):
    print("differ at stage %d: %s (%s)" % (d["stage_index"], d["stage_a"] or d["stage_b"], d["reason"]))
    if d["stage_a"] and d["stage_b"] and d["stage_a"] != d["stage_b"]:
        print("  tags: %s vs %s" % (d["stage_a"], d["stage_b"]))
    print("  a: %s\n  b: %s" % (d["digest_a"] or "(no such stage)", d["digest_b"] or "(no such stage)"))


def _check(names):
    failed = 0
    for name in names:
        try:
            ref = Card.reference(name)
            run = _run_fixture(name)
        except samebits.SameBitsError as e:
            print("  %-15s ERROR %s: %s" % (name, e.status_name, e))
            failed += 1
            continue
        same, diff = ref.compare(run)
        if same:
            print("  %-15s identical (%d stages)" % (name, ref.stage_count()))
        else:
            print("  %-15s DIFFERS: " % name, end="")
            _print_diff(diff)
            failed += 1
    return failed


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m samebits", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("version", help="library, package and profile versions")
    d = sub.add_parser("doctor", help="build facts and a self-check of every pinned fixture")
    d.add_argument("--threads", type=int)
    c = sub.add_parser("verify", help="run pinned fixtures and compare with their reference cards")
    c.add_argument("names", nargs="*", help="fixture names (default: all)")
    c.add_argument("--threads", type=int)
    f = sub.add_parser("fixture", help="'list', or 'run NAME [--out FILE]'")
    f.add_argument("action", choices=["list", "run"])
    f.add_argument("name", nargs="?")
    f.add_argument("--out")
    f.add_argument("--threads", type=int)
    cd = sub.add_parser("card", help="'diff A B': compare two cards")
    cd.add_argument("action", choices=["diff"])
    cd.add_argument("a")
    cd.add_argument("b")
    args = p.parse_args(argv)
    try:
        if getattr(args, "threads", None) is not None:
            samebits.set_num_threads(args.threads)
        if args.cmd == "version":
            print("samebits %s (package %s), profile %s, library %s"
                  % (samebits.version(), samebits.__version__, samebits.profile_version(),
                     samebits.library_path()))
            return 0
        if args.cmd == "doctor":
            print("samebits doctor")
            for k, v in samebits.build_info().items():
                print("%s: %s" % (k, v))
            env = os.environ.get("SAMEBITS_NUM_THREADS")
            print("threads: %d (%s)" % (samebits.get_num_threads(),
                                        "SAMEBITS_NUM_THREADS" if env else "default: online cores"))
            print("numeric mode: %s" % samebits.get_numeric_mode())
            print("self-check (pinned fixtures against reference cards):")
            failed = _check(fixture_names())
            print("self-check: %s" % ("FAILED" if failed else "passed"))
            return EXIT_DIFF if failed else 0
        if args.cmd == "verify":
            names = args.names or fixture_names()
            failed = _check(names)
            print("%d fixtures: %d identical, %d not identical" % (len(names), len(names) - failed, failed))
            return EXIT_DIFF if failed else 0
        if args.cmd == "fixture":
            if args.action == "list":
                print("\n".join(fixture_names()))
                return 0
            if not args.name:
                p.error("fixture run needs a NAME")
            card = _run_fixture(args.name)
            if args.out:
                card.save(args.out)
            else:
                sys.stdout.write(card.text())
            return 0
        if args.cmd == "card":
            same, diff = Card.load(args.a).compare(Card.load(args.b))
            if same:
                print("identical")
                return 0
            _print_diff(diff)
            return EXIT_DIFF
    except samebits.SameBitsError as e:
        print("samebits: error: %s: %s" % (e.status_name or type(e).__name__, e), file=sys.stderr)
        return EXIT_ERROR
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
