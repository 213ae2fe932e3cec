import { BENCH_MAX_PLOT_VARIANTS } from '../defaults.js';
import { UserError } from '../errors.js';

// How many variants a --plot draws (bench, bench show, bench compare): pure, said once.

/** --plot of more variants than a picture holds: refused before anything is drawn, printed or run. */
export function refuseUnplottable(plot: string | undefined, variants: number): void {
  if (plot && variants > BENCH_MAX_PLOT_VARIANTS) {
    throw new UserError(`--plot ${plot}: ${variants.toLocaleString('en-US')} variants; a plot draws at most ${BENCH_MAX_PLOT_VARIANTS} (its bars would be thinner than a pixel); the tables show them all without --plot`);
  }
}
