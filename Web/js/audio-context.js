// The one AudioContext of the page, with both worklets loaded. Capture and playback share it so
// the browser's echo canceller sees what is played.

let contextPromise = null;
let createdContext = null;

/** Resolves to the shared AudioContext once the capture and playback worklets are loaded. */
export function sharedAudioContext() {
  if (!contextPromise) contextPromise = createContext();
  return contextPromise;
}

/** Lets audio run; call from a user gesture (browsers keep contexts suspended until one). */
export function resumeAudio() {
  if (createdContext && createdContext.state === "suspended") {
    createdContext.resume().catch(() => {});
  }
}

async function createContext() {
  if (typeof AudioContext === "undefined" || typeof AudioWorkletNode === "undefined") {
    throw new Error("This browser has no AudioWorklet support.");
  }
  createdContext = new AudioContext({ latencyHint: "interactive" });
  await Promise.all([
    createdContext.audioWorklet.addModule(new URL("./capture-worklet.js", import.meta.url)),
    createdContext.audioWorklet.addModule(new URL("./playback-worklet.js", import.meta.url)),
  ]);
  return createdContext;
}
