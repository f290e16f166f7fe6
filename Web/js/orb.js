// The listening orb: always in the page, shown by opacity (so a press never waits on layout), it
// scales and ripples with the microphone level and shows the live partial transcript.

const SILENCE_DB = -60;
const LOUD_DB = -12;
const SMOOTHING = 0.35;

/** Drives the orb layer from the microphone level and the partial transcript. */
export class Orb {
  constructor(layer, caption) {
    this.layer = layer;
    this.caption = caption;
    this.visible = false;
    this.target = 0;
    this.level = 0;
    this.frame = 0;
  }

  /** Shows the orb (one class change, nothing else on the press path). */
  show() {
    if (this.visible) return;
    this.visible = true;
    this.caption.textContent = "";
    this.layer.classList.add("visible");
    this.animate();
  }

  /** Hides the orb and forgets its caption. */
  hide() {
    if (!this.visible) return;
    this.visible = false;
    this.layer.classList.remove("visible");
    cancelAnimationFrame(this.frame);
    this.level = 0;
    this.target = 0;
    this.layer.style.setProperty("--level", "0");
  }

  /** Feeds a microphone RMS level (linear, 0…1). */
  setLevel(rms) {
    const decibels = 20 * Math.log10(Math.max(rms, 1e-6));
    this.target = Math.min(1, Math.max(0, (decibels - SILENCE_DB) / (LOUD_DB - SILENCE_DB)));
  }

  /** Shows the words heard so far. */
  setCaption(text) {
    this.caption.textContent = text;
  }

  animate() {
    this.frame = requestAnimationFrame(() => {
      if (!this.visible) return;
      this.level += (this.target - this.level) * SMOOTHING;
      this.layer.style.setProperty("--level", this.level.toFixed(3));
      this.animate();
    });
  }
}
