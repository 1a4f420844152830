import { guessMimeType } from './mime.js';

/** Signatures of the image and audio formats models and MCP clients take, checked before the file name. */
const SIGNATURES: { mime: string; at?: number; bytes: number[] }[] = [
  { mime: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { mime: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { mime: 'image/gif', bytes: [0x47, 0x49, 0x46, 0x38] },
  { mime: 'image/bmp', bytes: [0x42, 0x4d] },
  { mime: 'audio/flac', bytes: [0x66, 0x4c, 0x61, 0x43] },
  { mime: 'audio/ogg', bytes: [0x4f, 0x67, 0x67, 0x53] },
  { mime: 'audio/mpeg', bytes: [0x49, 0x44, 0x33] },
  { mime: 'audio/mpeg', bytes: [0xff, 0xfb] },
];

/** RIFF containers: WebP images and WAV audio. */
const RIFF: Record<string, string> = { WEBP: 'image/webp', WAVE: 'audio/wav' };

/**
 * The MIME type of image or audio bytes: from their signature when they have a known one (a misnamed file
 * is still recognised), otherwise from the name's extension (SVG and other text formats). `undefined` when
 * neither says image or audio.
 */
export function mediaType(path: string, bytes: Uint8Array): string | undefined {
  for (const { mime, bytes: signature, at = 0 } of SIGNATURES) {
    if (signature.every((byte, i) => bytes[at + i] === byte)) return mime;
  }
  if (ascii(bytes, 0, 4) === 'RIFF') {
    const riff = RIFF[ascii(bytes, 8, 12)];
    if (riff !== undefined) return riff;
  }
  const byName = guessMimeType(path);
  return byName.startsWith('image/') || byName.startsWith('audio/') ? byName : undefined;
}

function ascii(bytes: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...bytes.subarray(from, to));
}

/** Media a tool result carries for clients that show it (MCP image and audio content blocks). */
export interface ToolMedia {
  type: 'image' | 'audio';
  mimeType: string;
  /** The bytes, base64. */
  data: string;
}

/** The `media` of a result `value`, when it carries one (as `read_media`'s does). */
export function mediaOf(value: unknown): ToolMedia | undefined {
  if (typeof value !== 'object' || value === null || !('media' in value)) return undefined;
  const media = (value as { media: unknown }).media;
  if (typeof media !== 'object' || media === null) return undefined;
  const { type, mimeType, data } = media as Partial<ToolMedia>;
  if ((type !== 'image' && type !== 'audio') || typeof mimeType !== 'string' || typeof data !== 'string') return undefined;
  return { type, mimeType, data };
}
