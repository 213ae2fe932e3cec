import { listen } from './detached-main.js';
import { Supervisor } from './supervisor.js';

// The module `up --detach` forks (detached.ts): the background supervisor in its real process. The
// logic is in detached-main.ts; this file only hands it the process and the real Supervisor.
listen(process, (o) => new Supervisor(o));
