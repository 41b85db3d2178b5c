/** The baseline of target 5: a bare `Deno.serve` that echoes a JSON body back. Prints its port. */
Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(`listening ${port}`) },
  async (request) => {
    return Response.json(await request.json());
  },
);
