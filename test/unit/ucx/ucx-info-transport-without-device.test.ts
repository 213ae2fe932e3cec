import { describe, expect, it } from 'vitest';
import { parseUcxInfoDevices } from '../../../src/host/ucx/parse-ucx.js';

// Older ucx_info -d prints a transport's name once ("#   Transport: rc_mlx5") and then one
// "#   Device: ..." section per device, skipping a device whose interface configuration cannot be
// read without a word (openucx/ucx src/tools/info/tl_info.c, print_tl_info/print_iface_info before
// the per-device "Transport:" line). A transport with no such device then has no Device line at
// all: the check lists it as "rc_mlx5/" with nothing made up after the slash.
const OLD = [
  '#', '# Memory domain: mlx5_0', '#            component: ib', '#', '#   Transport: rc_mlx5', '#',
  '#', '# Memory domain: sockcm', '#            component: sockcm', '#', '#   Transport: tcp', '#',
  '#   Device: eth0', '#', '#      capabilities:', '#             am_short: <= 8K', '#             am_bcopy: <= 8K', '#',
].join('\n');

describe('a transport ucx_info names without any device', () => {
  it('is listed with an empty device; the next transport keeps its own', () => {
    expect(parseUcxInfoDevices(OLD).map((t) => [t.name, t.device])).toEqual([['rc_mlx5', ''], ['tcp', 'eth0']]);
  });
});
