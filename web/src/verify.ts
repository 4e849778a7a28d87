// The wall's commitment, checked in the browser: SHA-256(seed) == commitment (both hex), with
// WebCrypto. A match proves the wall of the hand was fixed before the first tile was dealt.

function bytes(hex: string): Uint8Array<ArrayBuffer> {
  if (!/^([0-9a-f]{2})*$/i.test(hex)) throw new Error(`not hex: ${hex.slice(0, 16)}…`);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function hex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function verifyCommitment(seed: string, commitment: string): Promise<{ ok: boolean; digest: string }> {
  const digest = hex(await crypto.subtle.digest("SHA-256", bytes(seed)));
  return { ok: digest === commitment.toLowerCase(), digest };
}
