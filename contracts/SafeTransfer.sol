// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice `transfer` that also accepts tokens returning nothing, and reverts on every failure
/// (a `false` return, a revert, or a token address without code).
library SafeTransfer {
    error TokenHasNoCode(address token);
    error TransferFailed(address token, address to, uint256 amount);

    function safeTransfer(address token, address to, uint256 amount) internal {
        if (token.code.length == 0) revert TokenHasNoCode(token);
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || (data.length != 0 && (data.length != 32 || abi.decode(data, (uint256)) != 1))) {
            revert TransferFailed(token, to, amount);
        }
    }
}
