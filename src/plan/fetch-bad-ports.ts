// The ports fetch() refuses to connect to, whatever listens there: the WHATWG Fetch standard's
// "bad port" list (https://fetch.spec.whatwg.org/#port-blocking), which Node's fetch (undici) and
// every browser apply. dynamo-dev asks the frontend and each worker's system port over fetch, so a
// run on one of these ports could never be seen ready: it waited out its whole deadline saying
// "(bad port)". Measured: Node 20.20.2's fetch against every port 1-65535 of 127.0.0.1 refuses
// exactly these (the rest connect or are refused by the kernel).

export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111,
  113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566,
  6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Pure: whether fetch refuses this port. */
export const fetchRefuses = (port: number): boolean => FETCH_BAD_PORTS.has(port);
