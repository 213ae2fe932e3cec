// Reading a flag back out of a planned command line. Pure.

/** The value of `--flag V` or `--flag=V` in argv (the last one wins, as argparse does). */
export function flagValue(argv: readonly string[], flag: string): string | null {
  let v: string | null = null;
  argv.forEach((a, i) => {
    if (a === flag && i + 1 < argv.length) v = argv[i + 1];
    else if (a.startsWith(`${flag}=`)) v = a.slice(flag.length + 1);
  });
  return v;
}
