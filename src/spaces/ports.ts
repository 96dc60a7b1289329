// Loopback ports: whether one is free before a component is told to listen on it (so a taken port
// is one clear error instead of a component crashing in its log), and one the kernel picks free.
import net, { type AddressInfo } from 'node:net';

export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A loopback port nobody listens on right now (the kernel's choice). */
export function freeLoopbackPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
