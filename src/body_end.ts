/**
 * Tells when a response's body is over: read to its end, or cancelled by the client. A streamed
 * reply's handler returns long before its last byte, so this is when its request really ends.
 */

/** `response` with a body that calls `onEnd` once, at its end (at once when it has no body). */
export function whenBodyEnds(response: Response, onEnd: () => void): Response {
  const body = response.body;
  if (!body) {
    onEnd();
    return response;
  }
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
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
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(tracked, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
