"""python -m samebits: the CLI's commands that need no data files, over the same
library (version, doctor, verify, fixture list/run, card diff).

Exit status as the CLI's: 0 success, 1 a difference was found, 2 an error."""
import argparse
import os
import sys

import samebits
from ._model import Card, fixture_names

EXIT_DIFF, EXIT_ERROR = 1, 2


REFUSALS = ("SB_ERR_IDENTITY_REFUSED", "SB_ERR_MODE_UNSUPPORTED", "SB_ERR_BACKEND_UNAVAILABLE")
FAMILIES = ("profile", "logit", "gbdt", "forest")


def _run_fixture(name, extra=None, device=None):
    card = Card()
    card.set_meta("arch", samebits.build_info().get("arch", "unknown"))
    card.set_meta("threads", samebits.get_num_threads())
    if device is not None:
        card.set_meta("device", device)
    from ._lib import check, lib
    check(lib.sb_fixture_run_with(name.encode(), (extra or "").encode(), card._h.ptr))
    return card


def _device_of(extra):
    for tok in extra.replace(",", " ").split():
        if tok.startswith("device="):
            return tok[len("device="):]
    return "cpu"


def _verify(names, family, extra, cards_dir):
    """The CLI's `samebits verify`, line for line (cli/certify.c)."""
    from ._lib import lib
    if not names:
        names = [n for n in fixture_names()
                 if family is None or lib.sb_fixture_family(n.encode()).decode() == family]
    device = _device_of(extra)
    print("samebits verify: profile %s, arch %s, device %s, threads %d"
          % (samebits.profile_version(), samebits.build_info().get("arch", "unknown"), device,
             samebits.get_num_threads()))
    same = differ = refused = errors = 0
    for name in names:
        try:
            ref = Card.reference(name)
            run = _run_fixture(name, extra, device)
        except samebits.SameBitsError as e:
            refusal = e.status_name in REFUSALS
            print("  %-15s %s %s: %s" % (name, "REFUSED" if refusal else "ERROR", e.status_name, e))
            if refusal:
                refused += 1
            else:
                errors += 1
            continue
        ok, diff = ref.compare(run)
        if ok:
            print("  %-15s identical (%d stages)" % (name, ref.stage_count()))
            same += 1
        else:
            print("  %-15s DIFFERS: " % name, end="")
            _print_diff(diff)
            differ += 1
        if cards_dir:
            try:
                run.save(os.path.join(cards_dir, name + ".card"))
            except samebits.SameBitsError as e:
                print("  %-15s ERROR %s: %s" % (name, e.status_name, e))
                errors += 1
    bad = differ + refused + errors
    print("%d fixtures: %d identical, %d not identical (%d differ, %d refused, %d errors)"
          % (len(names), same, bad, differ, refused, errors))
    passed = len(names) > 0 and bad == 0
    print("verify: %s" % ("PASS" if passed else "FAIL"))
    return 0 if passed else EXIT_DIFF


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


def _input_card(name):
    """The card of a fixture's inputs, recorded through sb_fixture_inputs."""
    import ctypes
    from ._lib import Handle, check, lib
    card = Card()
    card.set_meta("fixture", name)
    card.set_meta("kind", "inputs")
    fn_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p,
                               ctypes.c_uint64)

    def record(ctx, stage, dtype, data, count):
        return lib.sb_card_record(card._h.ptr, stage, dtype, data, count)
    cb = fn_type(record)
    check(lib.sb_fixture_inputs(name.encode(), ctypes.cast(cb, ctypes.c_void_p), None))
    ref = ctypes.c_void_p()
    check(lib.sb_fixture_input_reference(name.encode(), ctypes.byref(ref)))
    return card, Card(Handle(ref, lib.sb_card_free))


def _check_fixture(names):
    """The CLI's `samebits check-fixture` (without --dir), line for line."""
    bad = 0
    for name in names:
        try:
            got, ref = _input_card(name)
        except samebits.SameBitsError as e:
            print("  %-15s ERROR %s: %s" % (name, e.status_name, e))
            bad += 1
            continue
        ok, diff = ref.compare(got)
        if ok:
            print("  %-15s inputs identical (%d arrays)" % (name, ref.stage_count()))
        else:
            print("  %-15s inputs DIFFER: " % name, end="")
            _print_diff(diff)
            bad += 1
    print("%d fixtures: %d with pinned inputs, %d not" % (len(names), len(names) - bad, bad))
    print("check-fixture: %s" % ("FAIL" if bad else "PASS"))
    return EXIT_DIFF if bad else 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m samebits", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("version", help="library, package and profile versions")
    d = sub.add_parser("doctor", help="build facts and a self-check of every pinned fixture")
    d.add_argument("--threads", type=int)
    c = sub.add_parser("verify", help="run pinned fixtures and compare with their reference cards")
    c.add_argument("names", nargs="*", help="fixture names (default: all), or key=value such as device=cuda")
    c.add_argument("--threads", type=int)
    c.add_argument("--family", choices=FAMILIES)
    c.add_argument("--cards", help="write each run's card into this directory")
    cf = sub.add_parser("check-fixture", help="the fixtures' pinned input digests, without training")
    cf.add_argument("names", nargs="*", help="fixture names (default: all)")
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
            names = [n for n in args.names if "=" not in n]
            extra = " ".join(n for n in args.names if "=" in n)
            if names and args.family:
                p.error("give fixture names or --family, not both")
            return _verify(names, args.family, extra, args.cards)
        if args.cmd == "check-fixture":
            return _check_fixture(args.names or fixture_names())
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
