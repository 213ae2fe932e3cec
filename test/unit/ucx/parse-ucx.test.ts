import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  evaluateTls, expandTlsEntry, parseUcxInfoDevices, parseUcxTls, parseUcxVersion,
} from '../../../src/host/ucx/parse-ucx.js';
import { SAMPLES } from '../../helpers/cli.js';

const sample = (f: string) => readFileSync(join(SAMPLES, 'ucx', f), 'utf8');
const singleHost = parseUcxInfoDevices(sample('ucx_info-d.single-host.txt'));

describe('parseUcxInfoDevices on the real single-host output', () => {
  it('lists every transport block with device, type and active messages from the am_* lines', () => {
    expect(singleHost).toEqual([
      { name: 'self', device: 'memory', type: 'loopback', activeMessages: true },
      { name: 'tcp', device: 'eth0', type: 'network', activeMessages: true },
      { name: 'tcp', device: 'lo', type: 'network', activeMessages: true },
      { name: 'posix', device: 'memory', type: 'intra-node', activeMessages: true },
      { name: 'sysv', device: 'memory', type: 'intra-node', activeMessages: true },
      { name: 'cma', device: 'memory', type: 'intra-node', activeMessages: false },
      { name: 'cuda_copy', device: 'cuda', type: 'accelerator', activeMessages: false },
      { name: 'cuda_ipc', device: 'cuda', type: 'accelerator', activeMessages: false },
    ]);
  });

  it('falls back to the known table for blocks without capability lines', () => {
    const text = '#      Transport: rc_mlx5\n#         Device: mlx5_0:1\n#   < failed to open interface >\n#\n#      Transport: cuda_ipc\n#         Device: cuda\n';
    expect(parseUcxInfoDevices(text)).toEqual([
      { name: 'rc_mlx5', device: 'mlx5_0:1', type: null, activeMessages: true },
      { name: 'cuda_ipc', device: 'cuda', type: null, activeMessages: false },
    ]);
  });

  it('returns nothing for unrelated text', () => {
    expect(parseUcxInfoDevices('Usage: ucx_info [options]\n')).toEqual([]);
  });
});

describe('parseUcxVersion', () => {
  it('reads the real -v output, with or without "# "', () => {
    expect(parseUcxVersion(sample('ucx_info-v.txt'))).toBe('1.17.0');
    expect(parseUcxVersion('Library version: 1.18.1\nLibrary path: /usr/lib/libucs.so.0\n')).toBe('1.18.1');
    expect(parseUcxVersion('# UCT version=1.9.0 revision 1d0a420\n')).toBe('1.9.0');
    expect(parseUcxVersion('nothing')).toBeNull();
  });
});

describe('UCX_TLS parsing', () => {
  it('reads allow lists, deny lists and all', () => {
    expect(parseUcxTls(undefined)).toEqual({ mode: 'all', entries: [] });
    expect(parseUcxTls('all')).toEqual({ mode: 'all', entries: [] });
    expect(parseUcxTls(' cuda_ipc , cuda_copy ')).toEqual({ mode: 'allow', entries: ['cuda_ipc', 'cuda_copy'] });
    expect(parseUcxTls('^cuda_ipc,rc')).toEqual({ mode: 'deny', entries: ['cuda_ipc', 'rc'] });
  });

  it('expands aliases as UCX does (aux members only for wireup)', () => {
    expect(expandTlsEntry('sm').primary.sort()).toEqual(['cma', 'knem', 'posix', 'sm', 'sysv', 'xpmem']);
    expect(expandTlsEntry('shm').primary).toContain('posix');
    expect(expandTlsEntry('cuda').primary).toEqual(['cuda', 'cuda_copy', 'cuda_ipc', 'gdr_copy']);
    expect(expandTlsEntry('rc')).toEqual({ primary: ['rc', 'rc_mlx5', 'rc_verbs'], aux: ['ud_mlx5', 'ud_verbs'] });
    expect(expandTlsEntry('rc_x')).toEqual({ primary: ['rc_x', 'rc_mlx5'], aux: ['ud_mlx5'] });
    expect(expandTlsEntry('ud')).toEqual({ primary: ['ud', 'ud_mlx5', 'ud_verbs'], aux: [] });
    expect(expandTlsEntry('dc_x').primary).toEqual(['dc_x', 'dc_mlx5']);
    expect(expandTlsEntry('rocm').primary).toEqual(['rocm', 'rocm_copy', 'rocm_ipc', 'rocm_gdr']);
    expect(expandTlsEntry('tcp')).toEqual({ primary: ['tcp'], aux: [] });
    expect(expandTlsEntry('ud_v:aux')).toEqual({ primary: [], aux: ['ud_v', 'ud_verbs'] });
    expect(expandTlsEntry('\\sm')).toEqual({ primary: ['sm'], aux: [] });
  });
});

describe('evaluateTls against the single-host transports', () => {
  it('UCX_TLS=cuda_ipc leaves no active-message transport', () => {
    const ev = evaluateTls('cuda_ipc', singleHost);
    expect(ev.enabled).toEqual(['cuda_ipc']);
    expect(ev.amTransports).toEqual([]);
  });

  it('UCX_TLS=cuda_ipc,cuda_copy neither', () => {
    expect(evaluateTls('cuda_ipc,cuda_copy', singleHost).peerAmTransports).toEqual([]);
  });

  it('self alone reaches no peer', () => {
    const ev = evaluateTls('self,cuda_ipc', singleHost);
    expect(ev.amTransports).toEqual(['self']);
    expect(ev.peerAmTransports).toEqual([]);
  });

  it('unset, all, a deny list and the safe list keep active messages', () => {
    expect(evaluateTls(null, singleHost).peerAmTransports).toEqual(['tcp', 'posix', 'sysv']);
    expect(evaluateTls('all', singleHost).enabled).toHaveLength(7);
    expect(evaluateTls('^cuda_ipc', singleHost).enabled).not.toContain('cuda_ipc');
    expect(evaluateTls('^cuda_ipc', singleHost).peerAmTransports).toEqual(['tcp', 'posix', 'sysv']);
    expect(evaluateTls('cuda_ipc,cuda_copy,sm,self,tcp', singleHost).enabled.sort()).toEqual(['cma', 'cuda_copy', 'cuda_ipc', 'posix', 'self', 'sysv', 'tcp']);
    expect(evaluateTls('^sm,tcp', singleHost).enabled).toEqual(['self', 'cuda_copy', 'cuda_ipc']);
  });

  it('names allow-list entries this host does not have', () => {
    const ev = evaluateTls('rc,cuda_ipc,tcp', singleHost);
    expect(ev.unknownEntries).toEqual(['rc']);
    expect(ev.peerAmTransports).toEqual(['tcp']);
  });

  it('judges from the known table without ucx_info', () => {
    expect(evaluateTls('cuda_ipc,cuda_copy', null).peerAmTransports).toEqual([]);
    expect(evaluateTls('cuda', null).peerAmTransports).toEqual([]);
    expect(evaluateTls('^cuda_ipc', null).peerAmTransports).toContain('tcp');
    expect(evaluateTls('rc', null).peerAmTransports.sort()).toEqual(['rc_mlx5', 'rc_verbs']);
  });
});
