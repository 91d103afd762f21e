//! The tool's own mining wallet: one key, one P2WPKH regtest address that btcd mines
//! to (`--miningaddr`), and the funding transactions it signs from mature coinbases.

use bitcoin::absolute::LockTime;
use bitcoin::secp256k1::{All, Message, Secp256k1, SecretKey};
use bitcoin::sighash::{EcdsaSighashType, SighashCache};
use bitcoin::transaction::Version;
use bitcoin::{
    Address, Amount, Block, CompressedPublicKey, KnownHrp, OutPoint, PrivateKey, ScriptBuf,
    Sequence, Transaction, TxIn, TxOut, Witness,
};

/// Confirmations a coinbase output needs before it can be spent.
pub const COINBASE_MATURITY: u64 = 100;
/// Outputs below this are not worth keeping as change (they go to the fee).
const DUST_SAT: u64 = 546;

/// An output the mining wallet can spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coin {
    pub outpoint: OutPoint,
    pub value: Amount,
    /// Height of the block whose coinbase created it; `None` for change outputs.
    pub coinbase_height: Option<u64>,
}

impl Coin {
    /// Whether a transaction spending it is valid in the block after `tip`.
    pub fn spendable_at(&self, tip: u64) -> bool {
        self.coinbase_height
            .is_none_or(|h| tip + 1 >= h + COINBASE_MATURITY)
    }
}

/// A signed funding transaction and what it does to the wallet.
#[derive(Debug, Clone)]
pub struct FundingTx {
    pub tx: Transaction,
    pub spent: Vec<OutPoint>,
    pub change: Option<Coin>,
    pub fee: Amount,
}

/// Why a funding transaction could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("the mining wallet holds {available_sat} sat in mature outputs; mine more blocks")]
    NotEnoughFunds { available_sat: u64 },
    #[error("nothing to pay")]
    NoOutputs,
    #[error("cannot sign input {0}: {1}")]
    Sign(usize, String),
}

/// A secp256k1 key the tool generates per run; btcd mines to its address.
pub struct MiningWallet {
    secp: Secp256k1<All>,
    secret: SecretKey,
    pubkey: CompressedPublicKey,
    address: Address,
    script_pubkey: ScriptBuf,
}

impl std::fmt::Debug for MiningWallet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("MiningWallet")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl MiningWallet {
    /// A fresh random key.
    pub fn generate() -> Self {
        let secret = SecretKey::new(&mut bitcoin::secp256k1::rand::thread_rng());
        Self::from_secret(secret)
    }

    pub fn from_secret(secret: SecretKey) -> Self {
        let secp = Secp256k1::new();
        let private = PrivateKey::new(secret, bitcoin::Network::Regtest);
        let pubkey = CompressedPublicKey::from_private_key(&secp, &private)
            .expect("PrivateKey::new makes compressed keys");
        let address = Address::p2wpkh(&pubkey, KnownHrp::Regtest);
        let script_pubkey = address.script_pubkey();
        Self {
            secp,
            secret,
            pubkey,
            address,
            script_pubkey,
        }
    }

    /// The regtest P2WPKH address (`bcrt1q...`) to give btcd as `--miningaddr`.
    pub fn address(&self) -> String {
        self.address.to_string()
    }

    pub fn script_pubkey(&self) -> &bitcoin::Script {
        &self.script_pubkey
    }

    /// The outputs of a block's coinbase that pay this wallet.
    pub fn coinbase_coins(&self, block: &Block, height: u64) -> Vec<Coin> {
        let Some(coinbase) = block.txdata.first() else {
            return Vec::new();
        };
        let txid = coinbase.compute_txid();
        coinbase
            .output
            .iter()
            .enumerate()
            .filter(|(_, out)| out.script_pubkey == self.script_pubkey && out.value > Amount::ZERO)
            .map(|(vout, out)| Coin {
                outpoint: OutPoint::new(txid, vout as u32),
                value: out.value,
                coinbase_height: Some(height),
            })
            .collect()
    }

    /// Builds and signs a transaction paying `outputs` from coins spendable in the block
    /// after `tip`, largest first, with change back to this wallet.
    pub fn build_funding(
        &self,
        coins: &[Coin],
        tip: u64,
        outputs: &[(ScriptBuf, Amount)],
        sat_per_vbyte: u64,
    ) -> Result<FundingTx, BuildError> {
        if outputs.is_empty() {
            return Err(BuildError::NoOutputs);
        }
        let wanted: u64 = outputs.iter().map(|(_, a)| a.to_sat()).sum();
        let outputs_vsize: u64 = outputs.iter().map(|(s, _)| output_vsize(s)).sum();
        let change_vsize = output_vsize(&self.script_pubkey);

        let mut mature: Vec<Coin> = coins
            .iter()
            .copied()
            .filter(|c| c.spendable_at(tip))
            .collect();
        mature.sort_by_key(|c| std::cmp::Reverse(c.value));
        let available_sat: u64 = mature.iter().map(|c| c.value.to_sat()).sum();

        let mut selected = Vec::new();
        let mut in_sat = 0u64;
        for coin in mature {
            selected.push(coin);
            in_sat += coin.value.to_sat();
            let fee = sat_per_vbyte * estimate_vsize(selected.len(), outputs_vsize + change_vsize);
            if in_sat >= wanted + fee {
                break;
            }
        }
        let fee_with_change =
            sat_per_vbyte * estimate_vsize(selected.len(), outputs_vsize + change_vsize);
        if in_sat < wanted + fee_with_change {
            return Err(BuildError::NotEnoughFunds { available_sat });
        }
        let change_sat = in_sat - wanted - fee_with_change;
        let (change_sat, fee_sat) = if change_sat >= DUST_SAT {
            (Some(change_sat), fee_with_change)
        } else {
            (None, in_sat - wanted)
        };

        let mut tx = Transaction {
            version: Version::TWO,
            lock_time: LockTime::ZERO,
            input: selected
                .iter()
                .map(|c| TxIn {
                    previous_output: c.outpoint,
                    script_sig: ScriptBuf::new(),
                    sequence: Sequence::ENABLE_RBF_NO_LOCKTIME,
                    witness: Witness::new(),
                })
                .collect(),
            output: outputs
                .iter()
                .map(|(script, value)| TxOut {
                    value: *value,
                    script_pubkey: script.clone(),
                })
                .collect(),
        };
        if let Some(sat) = change_sat {
            tx.output.push(TxOut {
                value: Amount::from_sat(sat),
                script_pubkey: self.script_pubkey.clone(),
            });
        }
        self.sign(&mut tx, &selected)?;

        let txid = tx.compute_txid();
        let change = change_sat.map(|sat| Coin {
            outpoint: OutPoint::new(txid, (tx.output.len() - 1) as u32),
            value: Amount::from_sat(sat),
            coinbase_height: None,
        });
        Ok(FundingTx {
            spent: selected.iter().map(|c| c.outpoint).collect(),
            tx,
            change,
            fee: Amount::from_sat(fee_sat),
        })
    }

    fn sign(&self, tx: &mut Transaction, prevouts: &[Coin]) -> Result<(), BuildError> {
        let sighash_type = EcdsaSighashType::All;
        let mut cache = SighashCache::new(&*tx);
        let mut witnesses = Vec::with_capacity(prevouts.len());
        for (i, coin) in prevouts.iter().enumerate() {
            let sighash = cache
                .p2wpkh_signature_hash(i, &self.script_pubkey, coin.value, sighash_type)
                .map_err(|e| BuildError::Sign(i, e.to_string()))?;
            let message = Message::from(sighash);
            let signature = bitcoin::ecdsa::Signature {
                signature: self.secp.sign_ecdsa(&message, &self.secret),
                sighash_type,
            };
            witnesses.push(Witness::p2wpkh(&signature, &self.pubkey.0));
        }
        for (input, witness) in tx.input.iter_mut().zip(witnesses) {
            input.witness = witness;
        }
        Ok(())
    }
}

/// Virtual size of one output: value (8), script length (1), script.
fn output_vsize(script: &bitcoin::Script) -> u64 {
    9 + script.len() as u64
}

/// Virtual size of a transaction with `inputs` P2WPKH inputs and outputs of the given
/// total size: 10.5 vB of header and segwit marker (rounded up), 68 vB per input
/// (a 72-byte signature at most).
fn estimate_vsize(inputs: usize, outputs_vsize: u64) -> u64 {
    11 + 68 * inputs as u64 + outputs_vsize
}

#[cfg(test)]
mod tests {
    use super::*;
    use bitcoin::hashes::Hash;

    fn wallet() -> MiningWallet {
        MiningWallet::from_secret(SecretKey::from_slice(&[7u8; 32]).unwrap())
    }

    fn coinbase(height: u64, sat: u64, n: u8) -> Coin {
        Coin {
            outpoint: OutPoint::new(bitcoin::Txid::from_byte_array([n; 32]), 0),
            value: Amount::from_sat(sat),
            coinbase_height: Some(height),
        }
    }

    fn other_script() -> ScriptBuf {
        let w = MiningWallet::from_secret(SecretKey::from_slice(&[9u8; 32]).unwrap());
        w.script_pubkey().to_owned()
    }

    /// Checks every input's witness the way a P2WPKH spend is validated: the pubkey
    /// hashes to the prevout's program and the signature verifies over the BIP 143
    /// sighash of that prevout's value.
    fn verify_p2wpkh_spend(tx: &Transaction, prevouts: &[(ScriptBuf, Amount)]) {
        let secp = Secp256k1::verification_only();
        let mut cache = SighashCache::new(tx);
        for (i, (input, (script, value))) in tx.input.iter().zip(prevouts).enumerate() {
            assert_eq!(input.witness.len(), 2, "input {i}: [sig, pubkey]");
            let pubkey = CompressedPublicKey::from_slice(&input.witness[1]).unwrap();
            assert_eq!(
                &ScriptBuf::new_p2wpkh(&pubkey.wpubkey_hash()),
                script,
                "input {i}: pubkey does not match the prevout"
            );
            let sig = bitcoin::ecdsa::Signature::from_slice(&input.witness[0]).unwrap();
            assert_eq!(sig.sighash_type, EcdsaSighashType::All);
            let sighash = cache
                .p2wpkh_signature_hash(i, script, *value, sig.sighash_type)
                .unwrap();
            secp.verify_ecdsa(&Message::from(sighash), &sig.signature, &pubkey.0)
                .unwrap_or_else(|e| panic!("input {i}: bad signature: {e}"));
        }
    }

    #[test]
    fn address_is_regtest_p2wpkh() {
        let w = wallet();
        assert!(w.address().starts_with("bcrt1q"), "{}", w.address());
        assert!(w.script_pubkey().is_p2wpkh());
        assert!(!format!("{w:?}").contains("secret"));
    }

    #[test]
    fn coinbase_maturity() {
        let c = coinbase(10, 1, 1);
        assert!(!c.spendable_at(108));
        assert!(
            c.spendable_at(109),
            "block 110 may spend a coinbase of block 10"
        );
        let change = Coin {
            coinbase_height: None,
            ..c
        };
        assert!(change.spendable_at(0));
    }

    #[test]
    fn funding_pays_outputs_signs_and_returns_change() {
        let w = wallet();
        let coins = [
            coinbase(1, 5_000_000_000, 1),
            coinbase(450, 625_000_000, 2), // immature at tip 500
            coinbase(300, 1_250_000_000, 3),
        ];
        let to = other_script();
        let outputs = vec![
            (to.clone(), Amount::from_sat(2_000_000_000)),
            (to.clone(), Amount::from_sat(2_500_000_000)),
            (to.clone(), Amount::from_sat(1_000_000_000)),
        ];
        let funding = w.build_funding(&coins, 500, &outputs, 3).unwrap();
        let tx = &funding.tx;

        // 5.5 BTC needs both mature coins, largest first; never the immature one.
        assert_eq!(funding.spent, vec![coins[0].outpoint, coins[2].outpoint]);
        assert_eq!(tx.output.len(), 4);
        for (out, (script, value)) in tx.output.iter().zip(&outputs) {
            assert_eq!(&out.script_pubkey, script);
            assert_eq!(out.value, *value);
        }
        let change = funding.change.unwrap();
        assert_eq!(tx.output[3].script_pubkey, *w.script_pubkey());
        assert_eq!(tx.output[3].value, change.value);
        assert_eq!(change.outpoint, OutPoint::new(tx.compute_txid(), 3));

        // Value is conserved and the fee matches the rate for the real size.
        let total_out: u64 = tx.output.iter().map(|o| o.value.to_sat()).sum();
        assert_eq!(
            6_250_000_000 - total_out,
            funding.fee.to_sat(),
            "inputs = outputs + fee"
        );
        let vsize = tx.vsize() as u64;
        assert!(funding.fee.to_sat() >= 3 * vsize, "fee below 3 sat/vB");
        assert!(
            funding.fee.to_sat() <= 3 * (vsize + 4),
            "fee far above 3 sat/vB"
        );

        let prevouts = [
            (w.script_pubkey().to_owned(), coins[0].value),
            (w.script_pubkey().to_owned(), coins[2].value),
        ];
        verify_p2wpkh_spend(tx, &prevouts);
    }

    #[test]
    fn signature_for_a_wrong_amount_does_not_verify() {
        let w = wallet();
        let coins = [coinbase(1, 5_000_000_000, 1)];
        let funding = w
            .build_funding(&coins, 200, &[(other_script(), Amount::from_sat(1_000))], 2)
            .unwrap();
        let result = std::panic::catch_unwind(|| {
            verify_p2wpkh_spend(
                &funding.tx,
                &[(
                    w.script_pubkey().to_owned(),
                    Amount::from_sat(4_999_999_999),
                )],
            )
        });
        assert!(
            result.is_err(),
            "the checker must catch a wrong prevout value"
        );
    }

    #[test]
    fn dust_change_goes_to_fee() {
        let w = wallet();
        let coins = [coinbase(1, 100_000, 1)];
        let fee = 2 * estimate_vsize(1, 31 + 31);
        let pay = 100_000 - fee - 100;
        let funding = w
            .build_funding(&coins, 200, &[(other_script(), Amount::from_sat(pay))], 2)
            .unwrap();
        assert!(funding.change.is_none());
        assert_eq!(funding.tx.output.len(), 1);
        assert_eq!(funding.fee.to_sat(), 100_000 - pay);
    }

    #[test]
    fn not_enough_mature_funds() {
        let w = wallet();
        let coins = [
            coinbase(1, 5_000_000_000, 1),
            coinbase(150, 5_000_000_000, 2),
        ];
        let err = w
            .build_funding(
                &coins,
                200,
                &[(other_script(), Amount::from_sat(6_000_000_000))],
                2,
            )
            .unwrap_err();
        assert_eq!(
            err,
            BuildError::NotEnoughFunds {
                available_sat: 5_000_000_000
            }
        );
        assert_eq!(
            w.build_funding(&coins, 200, &[], 2).unwrap_err(),
            BuildError::NoOutputs
        );
    }

    #[test]
    fn coinbase_coins_are_found_in_a_block() {
        let w = wallet();
        let coinbase_tx = Transaction {
            version: Version::ONE,
            lock_time: LockTime::ZERO,
            input: vec![TxIn::default()],
            output: vec![
                TxOut {
                    value: Amount::from_sat(5_000_000_000),
                    script_pubkey: w.script_pubkey().to_owned(),
                },
                TxOut {
                    value: Amount::ZERO,
                    script_pubkey: ScriptBuf::new_op_return([0u8; 4]),
                },
            ],
        };
        let block = Block {
            header: bitcoin::constants::genesis_block(bitcoin::Network::Regtest).header,
            txdata: vec![coinbase_tx.clone()],
        };
        let coins = w.coinbase_coins(&block, 42);
        assert_eq!(
            coins,
            vec![Coin {
                outpoint: OutPoint::new(coinbase_tx.compute_txid(), 0),
                value: Amount::from_sat(5_000_000_000),
                coinbase_height: Some(42),
            }]
        );
    }
}
