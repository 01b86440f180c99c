"""An ncu profile's samples and instruction counts split by a warp-specialized kernel's
warpgroups. The input is the per-SASS-instruction table of one kernel,

    ncu -i report.ncu-rep --page source --csv --print-source sass > kernel_sass.csv

captured with `--section SourceCounters` (bench/dsa_one_launch.py makes one launch to capture).
Instructions are in address order, and each warpgroup's code starts at its `USETMAXREG`
(T.set_max_nreg), so region 0 is what runs before any (setup), region n the n-th warpgroup's
code. For each region: its share of the stall samples, its instructions executed a warp a step
(given the program count, warps a warpgroup and steps a program), its top stall reasons and the
instructions with the most samples.

    python bench/ncu_by_warpgroup.py kernel_sass.csv [programs warps_a_warpgroup steps] [--top N]
"""

import argparse
import collections
import csv


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def regions(rows):
    """{region: (samples, instructions executed, Counter of stall reasons, [(samples, address,
    source)])} from ncu's csv rows (a header row starting "Address", then one row a SASS line)."""
    header = next(i for i, row in enumerate(rows) if row and row[0] == "Address")
    columns = {name: i for i, name in enumerate(rows[header])}
    stalls = [name for name in rows[header] if name.startswith("stall_") and "Not Issued" not in name]
    out = collections.defaultdict(lambda: [0.0, 0.0, collections.Counter(), []])
    region = 0
    for row in rows[header + 1:]:
        if len(row) < len(columns):
            continue
        source = row[columns["Source"]].strip()
        if "USETMAXREG" in source:
            region += 1
        samples = number(row[columns["Warp Stall Sampling (All Samples)"]])
        entry = out[region]
        entry[0] += samples
        entry[1] += number(row[columns["Instructions Executed"]])
        for name in stalls:
            entry[2][name] += number(row[columns[name]])
        entry[3].append((samples, row[columns["Address"]], source))
    return dict(out)


def report(by_region, warp_steps, top):
    total = sum(entry[0] for entry in by_region.values()) or 1
    lines = []
    for region, (samples, executed, stalls, instructions) in sorted(by_region.items()):
        lines.append(f"region {region}: {samples / total:.1%} of samples, {executed / warp_steps:.0f} instructions "
                     f"a warp a step")
        for name, count in stalls.most_common(6):
            lines.append(f"    {name}: {count / (samples or 1):.1%}")
        for count, address, source in sorted(instructions, reverse=True)[:top]:
            lines.append(f"      {count / (samples or 1):6.1%} {address} {source[:80]}")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("shape", nargs="*", type=int, help="programs, warps a warpgroup, steps a program")
    parser.add_argument("--top", type=int, default=12, help="instructions listed a region")
    args = parser.parse_args()
    if len(args.shape) not in (0, 3):
        parser.error("give programs, warps a warpgroup and steps a program, or none")
    programs, warps, steps = args.shape or (1, 1, 1)
    with open(args.csv, newline="") as f:
        print(report(regions(list(csv.reader(f))), programs * warps * steps, args.top))


if __name__ == "__main__":
    main()
