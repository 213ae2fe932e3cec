import { type Gate, verdict } from './types.js';

// No planned process ended while the load ran: a run that lost a worker (degraded) serves on fewer
// workers than the experiment names. The run's liveness (src/run/liveness.ts, what status says).

const gate: Gate = {
  id: 'processes.alive',
  title: 'no process died during the load',
  judge(f) {
    if (f.lost === null) return verdict('unknown', 'not judged: no load ran', { lost: null });
    const evidence = { lost: f.lost };
    if (f.lost.length === 0) return verdict('pass', `every planned process ran through the load (${f.workers.length + 1})`, evidence);
    const names = f.lost.map((l) => `${l.name} ${l.how}`).join(', ');
    return verdict('fail', `${names} during the load: the run was degraded`, evidence);
  },
};

export default gate;
