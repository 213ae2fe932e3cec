import { describe, expect, it } from 'vitest';
import { evaluateTls, parseUcxInfoDevices } from '../../../src/host/ucx/parse-ucx.js';

// ucx_info -d prints "capabilities:" once it has opened an interface, then
// "< failed to query interface >" when uct_iface_query fails (openucx/ucx
// src/tools/info/tl_info.c, print_iface_info); an interface it cannot open prints
// "< failed to open interface >" and no capability section. Opened but not queried: ucx_info shows
// no active message for it, and that is believed over the known table.
const block = (device: string, caps: string) => [
  '#      Transport: tcp', `#         Device: ${device}`, '#           Type: network', '#  System device: <unknown>', '#', caps, '#',
].join('\n');
const QUERIED = '#      capabilities:\n#            bandwidth: 11.91/ppn + 0.00 MB/sec\n#             am_short: <= 8K\n#             am_bcopy: <= 8K';
const NOT_QUERIED = '#      capabilities:\n#   < failed to query interface >';

describe('an interface ucx_info opened but could not query', () => {
  it('carries no active messages, even for tcp', () => {
    expect(parseUcxInfoDevices(block('lo', NOT_QUERIED))).toEqual([{ name: 'tcp', device: 'lo', type: 'network', activeMessages: false }]);
  });

  it('tcp still reaches a peer through another device that answered; not when none did', () => {
    expect(evaluateTls('tcp', parseUcxInfoDevices(`${block('lo', NOT_QUERIED)}\n${block('eth0', QUERIED)}`)).peerAmTransports).toEqual(['tcp']);
    expect(evaluateTls('tcp', parseUcxInfoDevices(`${block('lo', NOT_QUERIED)}\n${block('eth0', NOT_QUERIED)}`)).peerAmTransports).toEqual([]);
  });
});
