// Sends a JSON document with exactly the Content-Type given. fastify rewrites a JSON media type
// (quotes parameters, appends charset) unless the payload is a Buffer; clients compare
// `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` as kube-apiserver sends it.
import type { FastifyReply } from 'fastify';

export function sendExact(reply: FastifyReply, contentType: string, doc: unknown): FastifyReply {
  return reply.header('content-type', contentType).send(Buffer.from(JSON.stringify(doc)));
}
