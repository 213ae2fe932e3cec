import { describe, expect, it } from 'vitest';
import { evaluateTls } from '../../../src/host/ucx/parse-ucx.js';

// Without ucx_info, UCX_TLS is judged against every transport name UCX's alias table
// (openucx/ucx src/ucp/core/ucp_context.c, ucp_tl_aliases[]) and the active-message tables know.
// The check prints what a deny list leaves ("enabled by UCX_TLS: ..."): real names only, grouped
// as those with active messages, then the zero-copy ones, then the rest.

describe('the known transports, when ucx_info is missing', () => {
  it('a deny list of every active-message transport with a peer leaves exactly the other known transports, in that order', () => {
    const ev = evaluateTls('^tcp,sm,self', null);
    expect(ev.enabled).toEqual([
      'rc_verbs', 'rc_mlx5', 'dc_mlx5', 'ud_verbs', 'ud_mlx5',
      'cuda_copy', 'cuda_ipc', 'gdr_copy', 'rocm_copy', 'rocm_ipc', 'rocm_gdr', 'ze_copy', 'ze_ipc', 'ze_gdr',
      'ugni_smsg', 'ugni_udt', 'ugni_rdma',
    ]);
  });

  it('unset UCX_TLS enables every known transport once, by its real name', () => {
    expect(evaluateTls(null, null).enabled).toEqual([
      'self', 'tcp', 'posix', 'sysv', 'xpmem', 'rc_verbs', 'rc_mlx5', 'dc_mlx5', 'ud_verbs', 'ud_mlx5',
      'cma', 'knem', 'cuda_copy', 'cuda_ipc', 'gdr_copy', 'rocm_copy', 'rocm_ipc', 'rocm_gdr', 'ze_copy', 'ze_ipc', 'ze_gdr',
      'ugni_smsg', 'ugni_udt', 'ugni_rdma',
    ]);
  });

  it('a transport the alias table names only as a wireup (aux) member is still one UCX_TLS can name', () => {
    const ev = evaluateTls('ugni_udt', null);
    expect(ev.enabled).toEqual(['ugni_udt']);
    expect(ev.unknownEntries).toEqual([]);
  });
});
