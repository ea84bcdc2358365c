"""Score a table script (docs/table-script.md) and print the scoreboard round by round.

Each line of the script is applied in order; a line that cannot happen is reported with its line
number and why, and skipped: the lines after it still apply (with --strict the replay stops there).
Exit status: 0 every line accepted; 1 some line refused; 2 the script is unusable (no game,
unknown game, no players) or cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("script", metavar="SCRIPT", help="table-script file ('-' reads standard input)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (the contract's schema)")
    parser.add_argument("--strict", action="store_true", help="stop at the first refused line")
    parser.add_argument("--plot", metavar="OUT.png", help="also draw the totals by round as a PNG chart")


def main(args: argparse.Namespace) -> int:
    from rules.script import parse_script, replay_script

    try:
        if args.script == "-":
            text = sys.stdin.read()
        else:
            with open(args.script, encoding="utf-8") as f:
                text = f.read()
    except (OSError, UnicodeDecodeError) as error:
        print(f"tablemate replay: cannot read {args.script}: {error}", file=sys.stderr)
        return 2
    script = parse_script(text)
    if script.config is None:
        print(f"tablemate replay: {args.script} is not a usable table script: {script.fatal}", file=sys.stderr)
        return 2
    result = replay_script(script, strict=args.strict)
    if args.plot:
        try:
            plot_totals(result.match, args.plot)
        except (OSError, ValueError) as error:
            print(f"tablemate replay: cannot write the plot {args.plot}: {error}", file=sys.stderr)
            return 2
    summary = result.match.summary()
    summary["errors"] = [e.to_json() for e in result.errors]
    if args.json:
        print(json.dumps(summary))
    else:
        print(format_scoreboard(summary))
        for e in result.errors:
            print(f"line {e.line}: {e.text!r} refused: {e.error}", file=sys.stderr)
        if result.stopped_early:
            print("stopped at the first refused line (--strict)", file=sys.stderr)
    return 1 if result.errors else 0


def format_scoreboard(summary: dict) -> str:
    """Rounds down, players across: each round's score and the running total."""
    players = summary["players"]
    width = max(7, *(len(p) for p in players)) + 2
    lines = [f"{summary['game']}: " + ", ".join(players),
             "round  dealer    " + "".join(p.rjust(width) for p in players)]
    running = dict.fromkeys(players, 0)
    for r in summary["rounds"]:
        cells = []
        for p in players:
            running[p] += r["scores"][p]
            mark = "!" if p in r["busted"] else "*" if p == r["flip7"] else " "
            cells.append(f"{r['scores'][p]:>4}{mark}{running[p]:>4}".rjust(width))
        lines.append(f"{r['round']:>5}  {r['dealer'][:8]:<8}  " + "".join(cells))
    if summary["game"].startswith("flip7"):
        lines.append("(each cell: round score, then total; ! bust, * Flip 7)")
    else:
        lines.append("(each cell: round score, then total)")
    lines.append("totals: " + "  ".join(f"{p} {summary['totals'][p]}" for p in players))
    state = summary["state"]
    if summary["winner"]:
        lines.append(f"winner: {summary['winner']}")
    elif state.get("must"):
        lines.append(f"now: {state['must']['text']}")
    elif state.get("pending"):
        pending = state["pending"]
        options = ", ".join(_option_text(o) for o in pending["options"])
        lines.append(f"waiting: {pending['by']} chooses ({pending['kind']}): {options}")
    elif state.get("turn"):
        odds = state.get("bust_odds", {}).get(state["turn"])
        extra = f", bust odds {odds:.1%}" if odds is not None else ""
        lines.append(f"now: round {state.get('round')}, {state['turn']} to play{extra}")
    return "\n".join(lines)


def _option_text(option) -> str:
    """A choice as the table says it: a name, "ann 9" (ann's 9), or "ann 9 <> ben 3" (a swap)."""
    if isinstance(option, list) and option and isinstance(option[0], list):
        return " <> ".join(_option_text(part) for part in option)
    if isinstance(option, list):
        return " ".join(map(str, option))
    return str(option)


PLOT_SIZE = (900, 520)
PLOT_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                "#7f7f7f", "#bcbd22")


def plot_totals(match, path) -> None:
    """The totals by round of `match` as a PNG chart (Pillow; the OLED's end-of-game chart is the
    same lines, device/screens.py)."""
    from PIL import Image, ImageDraw

    from device.screens import font, plot_lines, totals_by_round

    series = totals_by_round(match.config.players, [r.scores for r in match.rounds])
    target = match.state.winning_total
    width, height = PLOT_SIZE
    image = Image.new("RGB", PLOT_SIZE, "white")
    draw = ImageDraw.Draw(image)
    box = (70, 50, width - 190, height - 50)
    rounds = max(1, len(match.rounds))
    top = max([target] + [max(totals) for _, totals in series])
    low = min([0] + [min(totals) for _, totals in series])
    step = next(s for s in (10, 25, 50, 100, 250, 500, 1000, 10 ** 9) if (top - low) / s <= 10)
    for value in range(low - low % step, top + 1, step):           # the grid and the axes' figures
        y = box[3] - (box[3] - box[1]) * (value - low) / max(1, top - low)
        draw.line((box[0], y, box[2], y), fill="#e5e5e5")
        draw.text((box[0] - 8, y), str(value), font=font(14), fill="black", anchor="rm")
    for i in range(rounds + 1):
        x = box[0] + (box[2] - box[0]) * i / rounds
        draw.text((x, box[3] + 8), str(i), font=font(14), fill="black", anchor="mt")
    draw.text((box[0] + (box[2] - box[0]) / 2, height - 12), "round", font=font(14), fill="black", anchor="ms")
    colours = [PLOT_COLOURS[i % len(PLOT_COLOURS)] for i in range(len(series))]
    _, target_y = plot_lines(draw, box, series, target, colours, [4] + [3] * (len(series) - 1), "black")
    draw.text((box[0] + 6, target_y - 4), f"{target} wins", font=font(14), fill="black", anchor="lb")
    title = f"{match.config.game}: totals by round" + (f" (winner {match.winner})" if match.winner else "")
    draw.text((box[0], 16), title, font=font(20), fill="black", anchor="lt")
    for i, ((name, totals), colour) in enumerate(zip(series, colours)):   # the legend, leader first
        y = box[1] + 24 * i
        draw.line((box[2] + 20, y, box[2] + 50, y), fill=colour, width=4 if i == 0 else 3)
        draw.text((box[2] + 58, y), f"{name} {totals[-1]}", font=font(16), fill="black", anchor="lm")
    image.save(path, "PNG")
