/**
 * Tells when a response's body is over: read to its end, or cancelled by the client. A streamed
 * reply's handler returns long before its last byte, so this is when its request really ends.
 */

/**
 * `response` with a body that calls `onEnd` once, at its end (at once when it has no body);
 * `closedByClient` says the client cancelled it before its end.
 */
export function whenBodyEnds(
  response: Response,
  onEnd: (closedByClient: boolean) => void,
): Response {
  const body = response.body;
  if (!body) {
    onEnd(false);
    return response;
  }
  let ended = false;
  const end = (closedByClient = false) => {
    if (ended) return;
    ended = true;
    onEnd(closedByClient);
  };
  const reader = body.getReader();
  const tracked = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          end();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        end();
      }
    },
    async cancel(reason) {
      end(true);
      await reader.cancel(reason);
    },
  });
  return new Response(tracked, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
