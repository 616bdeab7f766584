import { Webhook } from "standardwebhooks";

/** A fixed test secret pair (whsec_ + base64 of 24 bytes). */
export const SECRET_A = `whsec_${Buffer.from("wirewatch-test-secret-A!").toString("base64")}`;
export const SECRET_B = `whsec_${Buffer.from("wirewatch-test-secret-B!").toString("base64")}`;

/** Headers and body of a Standard Webhooks delivery signed with `secrets` at `atSeconds`. */
export function signedDelivery(
  event: { id: string },
  secrets: string[],
  atSeconds = Math.floor(Date.now() / 1000),
  id = event.id,
): { headers: Headers; body: Buffer } {
  const body = Buffer.from(JSON.stringify(event));
  const signatures = secrets.map((s) => new Webhook(s).sign(id, new Date(atSeconds * 1000), body));
  return {
    body,
    headers: new Headers({
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(atSeconds),
      "webhook-signature": signatures.join(" "),
    }),
  };
}
