// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A minimal contract account for Keyfob's tests: ERC-1271 signatures are valid when `owner`
/// signed the hash (for Flow A, the EIP-191 hash of the challenge text).
contract LicenseAccount {
    bytes4 internal constant MAGIC_VALUE = 0x1626ba7e; // isValidSignature.selector
    bytes4 internal constant INVALID = 0xffffffff;
    // secp256k1n / 2: a larger s is the malleable twin of a valid signature (EIP-2).
    uint256 internal constant HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if ((v != 27 && v != 28) || uint256(s) > HALF_N) return INVALID;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC_VALUE : INVALID;
    }
}
