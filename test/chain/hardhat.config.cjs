// Minimal hardhat 2 project for `hardhat node` in the tests: hardhat refuses to run without a config.
// Nothing is compiled through hardhat (local-chain.ts compiles with the solc npm package), and its
// cache goes to the system's temporary folder so that running the node leaves no files here.
const os = require("node:os");
const path = require("node:path");

module.exports = {
  networks: {
    hardhat: { chainId: 31337, hardfork: "cancun" },
  },
  paths: {
    cache: path.join(os.tmpdir(), "keyfob-hardhat-cache"),
    artifacts: path.join(os.tmpdir(), "keyfob-hardhat-artifacts"),
  },
};
