"""The `tablemate` command. Each subcommand lives in its own module, imported only when used, so
`tablemate replay` never loads OpenCV or onnxruntime."""

from __future__ import annotations

import argparse
import importlib
import sys

from device.logs import setup_logging

# name -> (module, one-line help). Each module defines configure(parser) and main(args) -> int.
SUBCOMMANDS = {
    "replay": ("device.replay_cmd", "score a table script (docs/table-script.md)"),
    "classify": ("vision.classify_cmd", "identify the card in each image"),
    "scan": ("vision.scan_cmd", "find and identify every card lying apart in one photo"),
    "calibrate": ("vision.calibrate_cmd", "learn your own deck's look from photos of each card (a profile)"),
    "run": ("device.run", "run the device: camera -> rules -> display and buttons"),
    "record": ("device.record_cmd", "run the device and record the camera and the buttons, to replay later"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablemate",
        description="tablemate keeps a card game honest: it reads the cards dealt under a camera, "
        "tracks Flip 7, Flip 7: Vengeance and UNO Flip, and shows turns, bust odds and scores.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):
                continue  # subcommand not built yet
            raise
        sub_parser = sub.add_parser(name, help=help_text, description=module.__doc__,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(sub_parser)
        sub_parser.set_defaults(_main=module.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    try:
        return args._main(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
