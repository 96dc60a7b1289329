// Checks that a loopback port is free before a component is told to listen on it, so a taken
// port is one clear error instead of a component crashing in its log.
import net from 'node:net';

export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
