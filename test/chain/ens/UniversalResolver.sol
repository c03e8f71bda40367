// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ENSRegistry} from "./ENSRegistry.sol";

/// The ENS Universal Resolver's onchain part, as viem's getEnsName, getEnsAddress and getEnsText call
/// it: resolveWithGateways(bytes,bytes,string[]) and reverseWithGateways(bytes,uint256,string[]),
/// with the Universal Resolver's errors. A name's resolver is the registry's for that exact name (no
/// ENSIP-10 wildcards), and no resolver is read offchain (the gateways go unused). A primary name is
/// checked as ENS checks it: the name must resolve back to the address, else ReverseAddressMismatch.
contract UniversalResolver {
    error ResolverNotFound(bytes name);
    error ResolverNotContract(bytes name, address resolver);
    error ResolverError(bytes errorData);
    error ReverseAddressMismatch(string primary, bytes primaryAddress);
    error UnsupportedResolverProfile(bytes4 selector);

    ENSRegistry public immutable registry;

    constructor(ENSRegistry ens) {
        registry = ens;
    }

    /// Calls `data` (a resolver function with the name's node) on `name`'s resolver (DNS-encoded name).
    function resolveWithGateways(bytes calldata name, bytes calldata data, string[] calldata) external view returns (bytes memory, address) {
        return _resolve(name, data);
    }

    /// The primary name of `lookupAddress` for `coinType` (ENSIP-19): its reverse record, if that
    /// name's address for the coin type is `lookupAddress`.
    function reverseWithGateways(bytes calldata lookupAddress, uint256 coinType, string[] calldata)
        external
        view
        returns (string memory primary, address resolver, address reverseResolver)
    {
        if (coinType != 60) revert UnsupportedResolverProfile(bytes4(keccak256("addr(bytes32,uint256)")));
        bytes memory reverseName = dnsEncode(string.concat(toHex(lookupAddress), ".addr.reverse"));
        bytes memory named;
        (named, reverseResolver) = _resolve(reverseName, abi.encodeWithSignature("name(bytes32)", namehash(reverseName, 0)));
        primary = abi.decode(named, (string));
        if (bytes(primary).length == 0) return (primary, address(0), reverseResolver);
        bytes memory name = dnsEncode(primary);
        bytes memory resolved;
        (resolved, resolver) = _resolve(name, abi.encodeWithSignature("addr(bytes32,uint256)", namehash(name, 0), coinType));
        bytes memory primaryAddress = abi.decode(resolved, (bytes));
        if (keccak256(primaryAddress) != keccak256(lookupAddress)) revert ReverseAddressMismatch(primary, primaryAddress);
    }

    function _resolve(bytes memory name, bytes memory data) private view returns (bytes memory, address resolver) {
        resolver = registry.resolver(namehash(name, 0));
        if (resolver == address(0)) revert ResolverNotFound(name);
        if (resolver.code.length == 0) revert ResolverNotContract(name, resolver);
        (bool ok, bytes memory result) = resolver.staticcall(data);
        if (!ok) revert ResolverError(result);
        if (result.length == 0) revert UnsupportedResolverProfile(bytes4(data));
        return (result, resolver);
    }

    /// The EIP-137 namehash of the DNS-encoded name from `offset`.
    function namehash(bytes memory name, uint256 offset) internal pure returns (bytes32) {
        uint256 length = uint8(name[offset]);
        if (length == 0) return bytes32(0);
        bytes memory label = new bytes(length);
        for (uint256 i = 0; i < length; i++) {
            label[i] = name[offset + 1 + i];
        }
        return keccak256(abi.encodePacked(namehash(name, offset + 1 + length), keccak256(label)));
    }

    /// "a.b" as DNS wire format: each label after its length, then a zero byte.
    function dnsEncode(string memory dotted) internal pure returns (bytes memory encoded) {
        bytes memory name = bytes(dotted);
        encoded = new bytes(name.length + 2);
        uint256 start = 0;
        for (uint256 i = 0; i <= name.length; i++) {
            if (i == name.length || name[i] == ".") {
                encoded[start] = bytes1(uint8(i - start));
                for (uint256 j = start; j < i; j++) {
                    encoded[j + 1] = name[j];
                }
                start = i + 1;
            }
        }
    }

    function toHex(bytes memory data) internal pure returns (string memory) {
        bytes memory digits = "0123456789abcdef";
        bytes memory out = new bytes(data.length * 2);
        for (uint256 i = 0; i < data.length; i++) {
            out[2 * i] = digits[uint8(data[i]) >> 4];
            out[2 * i + 1] = digits[uint8(data[i]) & 0x0f];
        }
        return string(out);
    }
}
