import { startQuire } from "@quire/server/testing";

Deno.test("the password answer comes first", async () => {
  await using quire = await startQuire();
  await quire.client.createIndex("faq", [
    { id: "password", text: "Reset your password from the sign-in page" },
    { id: "shipping", text: "Orders ship within two business days" },
    { id: "refund", text: "Refunds reach your card within a week" },
  ]);
  const { hits } = await quire.client.search("faq", "I forgot my password", { mode: "hybrid" });
  if (hits[0]?.id !== "password") throw new Error(`expected "password" first, got ${JSON.stringify(hits)}`);
});
