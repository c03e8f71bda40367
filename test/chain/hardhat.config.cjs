// Minimal hardhat 2 project for `hardhat node` in the tests (local-chain.ts): hardhat refuses to run
// without a config. Nothing is compiled through hardhat (local-chain.ts compiles with the solc npm
// package), and its cache goes to the system's temporary folder so that the node leaves no files here.
const os = require("node:os");
const path = require("node:path");

// If the test process that started this node dies without stopping it (killed by a signal, say),
// end the node too rather than leave it running.
const parent = Number(process.env.KEYFOB_CHAIN_PARENT_PID);
if (parent > 0) {
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1_000).unref();
}

module.exports = {
  networks: {
    hardhat: { chainId: 31337, hardfork: "cancun" },
  },
  paths: {
    cache: path.join(os.tmpdir(), "keyfob-hardhat-cache"),
    artifacts: path.join(os.tmpdir(), "keyfob-hardhat-artifacts"),
  },
};
