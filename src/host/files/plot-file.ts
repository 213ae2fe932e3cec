import { access, constants, lstat, stat } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { writeWholeFile } from './exclusive-write.js';

// `--plot FILE.svg|png`: the picture of a bench result. The SVG is ours (ui/bench-plot-svg.ts); a PNG
// is that SVG rasterised by @resvg/resvg-js (prebuilt binaries per platform, no system packages),
// imported only when a PNG is asked for. Written beside the target and renamed: never half a file.

export type PlotFormat = 'svg' | 'png';

/** Pure: the format a --plot path asks for, or a one-line input error naming the flag. */
export function plotFormat(path: string): PlotFormat {
  const ext = extname(path).toLowerCase();
  if (ext === '.svg') return 'svg';
  if (ext === '.png') return 'png';
  throw new UserError(`--plot ${path}: the file must end in .svg or .png (the picture's format)`);
}

/**
 * Before a bench starts: the format, and a folder that exists and takes files (a plot written at
 * the end of a long bench must not fail then on a typo in its folder). One-line input errors.
 */
export async function checkPlotTarget(path: string): Promise<void> {
  plotFormat(path);
  const dir = dirname(resolve(path));
  const isDir = await stat(dir).then((s) => s.isDirectory(), () => false);
  if (!isDir) throw new UserError(`--plot ${path}: its folder ${dir} does not exist`);
  const writable = await access(dir, constants.W_OK).then(() => true, () => false);
  if (!writable) throw new UserError(`--plot ${path}: its folder ${dir} is not writable`);
}

export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  // System fonts for the labels (DejaVu Sans where present); 2x for a sharp picture in a document.
  const r = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, fitTo: { mode: 'zoom', value: 2 } });
  return r.render().asPng();
}

/**
 * Writes the picture whole (an exclusive, unguessable temporary file renamed over the target:
 * a symlink planted at a predictable `<plot>.<pid>.tmp` was followed, and a failed write left the
 * temporary behind). The target itself: a regular file is replaced (the picture asked for, e.g.
 * drawn again); a folder, FIFO, device or symbolic link there is refused, never replaced.
 */
export async function writePlotFile(path: string, svg: string): Promise<void> {
  const format = plotFormat(path);
  const there = await lstat(path).catch(() => null);
  if (there && !there.isFile()) {
    const what = there.isSymbolicLink() ? 'a symbolic link' : there.isDirectory() ? 'a folder' : 'not a regular file';
    throw new UserError(`--plot ${path}: is ${what}; give the path of a new or regular file`);
  }
  const data = format === 'svg' ? svg : await svgToPng(svg);
  try {
    await writeWholeFile(path, data);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`--plot ${path}: cannot write (${code === 'ENOENT' ? 'its directory does not exist' : code ?? (err as Error).message})`);
  }
}
