"""Builds a tiny local model folder the released Dynamo mocker and frontend can serve, offline.

`transformers.AutoConfig` must read its config.json (so a real `model_type`), and the frontend
needs a tokenizer (tokenizer.json) and a chat template (tokenizer_config.json). No weights: the
mocker simulates the engine. The tokenizer is a byte-level BPE trained here on common English
words (the probe's prompts are made of such words), so any text encodes and words cost few tokens.

usage: python make-model.py FOLDER [--hub-cache DIR --repo-id ORG/NAME]
  With --hub-cache the folder is also laid out as a Hugging Face cache entry for ORG/NAME
  (models--ORG--NAME/snapshots/<rev>/ plus refs/main), so `--model ORG/NAME` resolves offline
  with HF_HUB_OFFLINE=1.
"""
import argparse
import json
import os
import shutil

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
WORDS = (
    "the of and to a in is it you that he was for on are with as his they be at one have this from or had by "
    "hot word but what some we can out other were all there when up use your how said an each she which do "
    "their time if will way about many then them write would like so these her long make thing see him two "
    "has look more day could go come did number sound no most people my over know water than call first who "
    "may down side been now find any new work part take get place made live where after back little only "
    "round man year came show every good me give our under name very through just form sentence great think "
    "say help low line differ turn cause much mean before move right boy old too same tell does set three "
    "want air well also play small end put home read hand port large spell add even land here must big high "
    "such follow act why ask men change went light kind off need house picture try us again animal point "
    "mother world near build self earth father head stand own page should country found answer school grow "
    "study still learn plant cover food sun four between state keep eye never last let thought city tree "
    "cross farm hard start might story saw far sea draw left late run while press close night real life few "
    "north open seem together next white children begin got walk example ease paper group always music those "
    "both mark often letter until mile river car feet care second book carry took science eat room friend "
    "began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl "
    "usual young ready above ever red list though feel talk bird soon body dog family direct pose leave song "
    "measure door product black short numeral class wind question happen complete ship area half rock order "
    "fire south problem piece told knew pass since top whole king space heard best hour better true during "
    "hundred five remember step early hold west ground interest reach fast verb sing listen six table travel "
    "less morning ten simple several vowel toward war lay against pattern slow center love person money serve "
    "appear road map rain rule govern pull cold notice voice unit power town fine certain fly fall lead cry "
    "dark machine note wait plan figure star box noun field rest correct able pound done beauty drive stood "
    "contain front teach week final gave green oh quick develop ocean warm free minute strong special mind "
    "behind clear tail produce fact street inch multiply nothing course stay wheel full force blue object "
    "decide surface deep moon island foot system busy test record boat common gold possible plane stead dry "
    "wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring yes distant fill "
    "east paint language among document probe year thing woman child student country program company business "
    "issue service member law team minute kid parent office health art history party result reason research "
    "guy moment teacher education age policy market nation college experience effect control development role "
    "effort rate heart drug leader police price report decision son view relationship building action model "
    "season society tax director position player event official matter couple site project activity court oil "
    "situation cost industry image phone data practice doctor wall patient worker news movie support technology "
    "baby computer type attention film source organization hair window evidence population bridge stone"
).split()


def build(folder):
    os.makedirs(folder, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=4096, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [" ".join(WORDS[i:] + WORDS[:i]) for i in range(0, len(WORDS), 7)]
    tok.train_from_iterator(corpus * 4, trainer)
    tok.save(os.path.join(folder, "tokenizer.json"))
    eos = tok.token_to_id("<|im_end|>")
    config = {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "max_position_embeddings": 32768, "vocab_size": tok.get_vocab_size(), "torch_dtype": "bfloat16",
        "bos_token_id": tok.token_to_id("<|endoftext|>"), "eos_token_id": eos, "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0, "tie_word_embeddings": True,
    }
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
        "model_max_length": 32768,
        "chat_template": (
            "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
        ),
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config, f, indent=2)
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos}, f)
    return tok.get_vocab_size()


def add_to_hub_cache(folder, hub_cache, repo_id):
    """The huggingface_hub cache layout: models--ORG--NAME/{snapshots/<rev>/...,refs/main}."""
    rev = "0" * 40
    repo = os.path.join(hub_cache, "models--" + repo_id.replace("/", "--"))
    snap = os.path.join(repo, "snapshots", rev)
    os.makedirs(snap, exist_ok=True)
    for name in os.listdir(folder):
        shutil.copyfile(os.path.join(folder, name), os.path.join(snap, name))
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(rev)
    return snap


def main():
    p = argparse.ArgumentParser()
    p.add_argument("folder")
    p.add_argument("--hub-cache")
    p.add_argument("--repo-id")
    a = p.parse_args()
    vocab = build(a.folder)
    snap = add_to_hub_cache(a.folder, a.hub_cache, a.repo_id) if a.hub_cache and a.repo_id else None
    print(json.dumps({"folder": os.path.abspath(a.folder), "vocab": vocab, "snapshot": snap}))


if __name__ == "__main__":
    main()
