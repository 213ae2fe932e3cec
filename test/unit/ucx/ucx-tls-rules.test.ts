import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateTls, expandTlsEntry, parseUcxInfoDevices, parseUcxTls } from '../../../src/host/ucx/parse-ucx.js';
import { SAMPLES } from '../../helpers/cli.js';

// What a UCX_TLS value leaves NIXL, as UCX itself reads it: the alias table of openucx/ucx
// src/ucp/core/ucp_context.c (ucp_tl_aliases[]), and which transports carry active messages when
// ucx_info cannot be asked (FACTS §5).

describe('every UCX_TLS alias, as ucp_tl_aliases[] defines it', () => {
  it.each([
    ['mm', ['mm', 'posix', 'sysv', 'xpmem'], []],
    ['sm', ['sm', 'posix', 'sysv', 'xpmem', 'knem', 'cma'], []],
    ['shm', ['shm', 'posix', 'sysv', 'xpmem', 'knem', 'cma'], []],
    ['ib', ['ib', 'rc_verbs', 'ud_verbs', 'rc_mlx5', 'ud_mlx5', 'dc_mlx5'], []],
    ['ud_v', ['ud_v', 'ud_verbs'], []],
    ['ud_x', ['ud_x', 'ud_mlx5'], []],
    ['ud', ['ud', 'ud_mlx5', 'ud_verbs'], []],
    ['rc_v', ['rc_v', 'rc_verbs'], ['ud_verbs']],
    ['rc_x', ['rc_x', 'rc_mlx5'], ['ud_mlx5']],
    ['rc', ['rc', 'rc_mlx5', 'rc_verbs'], ['ud_mlx5', 'ud_verbs']],
    ['dc', ['dc', 'dc_mlx5'], ['ud_mlx5']],
    ['dc_x', ['dc_x', 'dc_mlx5'], ['ud_mlx5']],
    ['ugni', ['ugni', 'ugni_smsg', 'ugni_rdma'], ['ugni_udt']],
    ['cuda', ['cuda', 'cuda_copy', 'cuda_ipc', 'gdr_copy'], []],
    ['rocm', ['rocm', 'rocm_copy', 'rocm_ipc', 'rocm_gdr'], []],
    ['ze', ['ze', 'ze_copy', 'ze_ipc', 'ze_gdr'], []],
  ])('%s', (alias, primary, aux) => {
    expect(expandTlsEntry(alias)).toEqual({ primary, aux });
  });

  it('a plain transport marked :aux is for wireup only; blanks around an entry do not count', () => {
    expect(expandTlsEntry('tcp:aux')).toEqual({ primary: [], aux: ['tcp'] });
    expect(expandTlsEntry(' tcp ')).toEqual({ primary: ['tcp'], aux: [] });
  });
});

describe('without ucx_info: which transports carry active messages', () => {
  it.each(['tcp', 'posix', 'sysv', 'xpmem', 'rc_verbs', 'rc_mlx5', 'dc_mlx5', 'ud_verbs', 'ud_mlx5'])('UCX_TLS=%s reaches a peer with active messages', (t) => {
    expect(evaluateTls(t, null).peerAmTransports).toEqual([t]);
  });

  it.each(['cma', 'knem', 'cuda_copy', 'cuda_ipc', 'gdr_copy', 'rocm_copy', 'rocm_ipc', 'rocm_gdr', 'ze_copy', 'ze_ipc', 'ze_gdr'])(
    'UCX_TLS=%s moves data but carries no active messages',
    (t) => {
      const ev = evaluateTls(t, null);
      expect(ev.enabled).toEqual([t]);
      expect(ev.amTransports).toEqual([]);
    },
  );

  it('self and the local copies reach no other process; IPC does', () => {
    for (const t of ['self', 'cuda_copy', 'gdr_copy', 'rocm_copy', 'ze_copy']) expect(evaluateTls(t, null).peerTransports, t).toEqual([]);
    for (const t of ['cuda_ipc', 'rocm_ipc', 'cma']) expect(evaluateTls(t, null).peerTransports, t).toEqual([t]);
    expect(evaluateTls('self', null).amTransports).toEqual(['self']);
  });

  it('ucx_info that listed no transport at all: judged from the known table', () => {
    const ev = evaluateTls('tcp', []);
    expect(ev.fromUcxInfo).toBe(false);
    expect(ev.peerAmTransports).toEqual(['tcp']);
  });
});

describe('UCX_TLS values', () => {
  const singleHost = parseUcxInfoDevices(readFileSync(join(SAMPLES, 'ucx', 'ucx_info-d.single-host.txt'), 'utf8'));

  it('blanks only are unset; a doubled comma adds no entry', () => {
    expect(parseUcxTls('   ')).toEqual({ mode: 'all', entries: [] });
    expect(parseUcxTls('tcp,,self')).toEqual({ mode: 'allow', entries: ['tcp', 'self'] });
    expect(parseUcxTls('^all')).toEqual({ mode: 'deny', entries: ['all'] });
  });

  it('an alias this host has some members of is no unknown entry; a deny list names none', () => {
    expect(evaluateTls('sm,cuda_ipc', singleHost).unknownEntries).toEqual([]);
    expect(evaluateTls('^rc,ugni', singleHost).unknownEntries).toEqual([]);
  });
});

describe('ucx_info over the table', () => {
  // AWS EFA's srd: not in the known table; ucx_info shows its active messages. One device failed
  // to open (no capability lines), the other reports am_short.
  const efa = parseUcxInfoDevices([
    '#      Transport: srd', '#         Device: rdmap0s6-rdm', '#   < failed to open interface >', '#',
    '#      Transport: srd', '#         Device: rdmap0s7-rdm', '#           Type: network', '#      capabilities:', '#             am_short: <= 8K',
  ].join('\n'));

  it('a transport the table does not know counts by ucx_info\'s am lines, on any of its devices', () => {
    expect(efa.map((t) => [t.device, t.activeMessages])).toEqual([['rdmap0s6-rdm', false], ['rdmap0s7-rdm', true]]);
    expect(evaluateTls('srd', efa).peerAmTransports).toEqual(['srd']);
  });
});
