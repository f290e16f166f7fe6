// PCM16 little-endian <-> base64, the wire format of realtime audio.

/** The sample rate of every audio stream on the realtime connection. */
export const WIRE_SAMPLE_RATE = 24000;

const hostIsLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Encodes pcm16 samples as base64 of their little-endian bytes. */
export function pcm16ToBase64(samples) {
  const bytes = new Uint8Array(samples.length * 2);
  if (hostIsLittleEndian) {
    bytes.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  } else {
    const view = new DataView(bytes.buffer);
    samples.forEach((sample, index) => view.setInt16(index * 2, sample, true));
  }
  let binary = "";
  const stride = 0x8000;
  for (let offset = 0; offset < bytes.length; offset += stride) {
    binary += String.fromCharCode.apply(null, bytes.subarray(offset, offset + stride));
  }
  return btoa(binary);
}

/**
 * Decodes base64 pcm16 into float samples in [-1, 1).
 * Returns null for text that is not base64 or has an odd number of bytes.
 */
export function base64ToFloat32(text) {
  let binary;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (binary.length % 2 !== 0) return null;
  const count = binary.length / 2;
  const samples = new Float32Array(count);
  for (let index = 0; index < count; index += 1) {
    const low = binary.charCodeAt(index * 2);
    const high = binary.charCodeAt(index * 2 + 1);
    const value = (high << 8) | low;
    samples[index] = (value >= 0x8000 ? value - 0x10000 : value) / 32768;
  }
  return samples;
}
