// Types of local-speech.mjs for the TypeScript tests that import it.
export declare const SPEAK_RATES: number[];
export declare const ESPEAK_RATE: number;
export declare const MAX_TEXT: number;
export declare function wavSamples(wav: Uint8Array): Int16Array;
export declare function resample(samples: Int16Array, from: number, to: number): Int16Array;
export declare function speak(text: string, rate: number): Promise<Int16Array>;
export declare function startLocalSpeech(options?: { port?: number; warm?: boolean }): Promise<{
  url: string;
  close: () => Promise<void>;
  server: import("node:http").Server;
}>;
