// A streaming band-limited resampler (windowed-sinc interpolation), used by the capture worklet
// to turn the audio context's rate into the wire's 24 kHz without aliasing.

const TABLE_RESOLUTION = 512;

/** Resamples a stream of float blocks from one rate to another, keeping state between blocks. */
export class StreamingResampler {
  /**
   * @param {number} inputRate samples per second coming in
   * @param {number} outputRate samples per second going out
   * @param {number} zeroCrossings kernel half-width in zero crossings of the low-pass sinc
   */
  constructor(inputRate, outputRate, zeroCrossings = 8) {
    this.passthrough = inputRate === outputRate;
    this.step = inputRate / outputRate;
    const cutoff = Math.min(1, outputRate / inputRate) * 0.92;
    this.halfWidth = Math.ceil(zeroCrossings / cutoff);
    this.kernel = makeKernel(cutoff, this.halfWidth);
    this.history = new Float32Array(this.halfWidth * 2 + 8192);
    this.reset();
  }

  /** Forgets earlier input, as at the start of a new utterance. */
  reset() {
    this.history.fill(0);
    this.length = this.halfWidth;
    this.position = this.halfWidth;
  }

  /** The most output samples `process` can produce for an input of `inputLength` samples. */
  maxOutput(inputLength) {
    return Math.ceil((inputLength + this.halfWidth * 2) / this.step) + 2;
  }

  /**
   * Feeds `input` and writes the output samples it completes into `output`.
   * @returns {number} how many samples were written
   */
  process(input, output) {
    if (this.passthrough) {
      output.set(input);
      return input.length;
    }
    this.append(input);
    const { history, kernel, halfWidth, step } = this;
    let written = 0;
    while (Math.floor(this.position) + halfWidth < this.length) {
      const center = Math.floor(this.position);
      const fraction = this.position - center;
      let sum = 0;
      for (let tap = -halfWidth + 1; tap <= halfWidth; tap += 1) {
        const distance = Math.abs(tap - fraction);
        sum += history[center + tap] * kernel[Math.round(distance * TABLE_RESOLUTION)];
      }
      output[written] = sum;
      written += 1;
      this.position += step;
    }
    this.discardConsumed();
    return written;
  }

  append(input) {
    if (this.length + input.length > this.history.length) {
      const grown = new Float32Array((this.length + input.length) * 2);
      grown.set(this.history.subarray(0, this.length));
      this.history = grown;
    }
    this.history.set(input, this.length);
    this.length += input.length;
  }

  discardConsumed() {
    const keepFrom = Math.floor(this.position) - this.halfWidth;
    if (keepFrom <= 0) return;
    this.history.copyWithin(0, keepFrom, this.length);
    this.length -= keepFrom;
    this.position -= keepFrom;
  }
}

/** A Hann-windowed low-pass sinc sampled every 1/TABLE_RESOLUTION input samples. */
function makeKernel(cutoff, halfWidth) {
  const size = halfWidth * TABLE_RESOLUTION + 2;
  const table = new Float32Array(size);
  for (let index = 0; index < size; index += 1) {
    const distance = index / TABLE_RESOLUTION;
    if (distance >= halfWidth) continue;
    const x = cutoff * distance;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const window = 0.5 * (1 + Math.cos((Math.PI * distance) / halfWidth));
    table[index] = cutoff * sinc * window;
  }
  return table;
}
