// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI front end (docs/kmd-bringup.md, "The PCIe path"): a Sable NPU card as its PCIe IP
 * presents it (pci_card.h: BAR0 the registers, BAR2 the device memory, MSI-X vector 0 the host
 * interrupt), or QEMU's ivshmem-doorbell device served by `sable-simd --pci-socket`, whose
 * registers cross as a register area at the end of BAR2 plus ivshmem's doorbell. ivshmem devices
 * are bound only on request (driver_override, or the ivshmem module parameter): any other user of
 * ivshmem on the machine is not this driver's. Everything else is the bus-independent driver
 * (sable_main.c).
 */
#include <linux/delay.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>

#include "sable/firmware/pci_card.h"
#include "sable_npu.h"

static bool ivshmem;
module_param(ivshmem, bool, 0444);
MODULE_PARM_DESC(ivshmem,
		 "also bind QEMU's ivshmem-doorbell devices (1af4:1110), served by sable-simd --pci-socket");

/* How long a register write waits for room in a full write log: the server drains the log at
 * each doorbell, so a log full for this long means the server is gone (the write is dropped;
 * the health work then finds the device's timer standing still).
 */
#define SABLE_IVSHMEM_LOG_WAIT_US 20000

/* Device memory smaller than this is unusable (kmd/core's firmware area and a heap). */
#define SABLE_PCI_MIN_MEMORY (4ull << 20)

struct sable_ivshmem {
	void __iomem *doorbell;                 /* ivshmem's Doorbell register (BAR0) */
	struct sable_ivshmem_regs __iomem *regs; /* the register area's header (BAR2's end) */
	u32 doorbell_value;                     /* (server peer << 16) | vector 0 */
	struct mutex lock;                      /* one writer of the log at a time */
	u32 tail;                               /* under lock: the next log entry */
};

/*
 * A register write through the transport: the entry, then the tail that publishes it (writel
 * orders them), then the server's doorbell. Callers may sleep (kmd/core's lock is a mutex).
 */
static void sable_ivshmem_write(struct sable_npu *npu, u32 offset, u32 value)
{
	struct sable_ivshmem *t = npu->transport;
	unsigned int waited = 0;
	u32 slot;

	mutex_lock(&t->lock);
	while (t->tail - readl(&t->regs->write_head) >= SABLE_IVSHMEM_WRITE_LOG) {
		if (waited >= SABLE_IVSHMEM_LOG_WAIT_US) {
			mutex_unlock(&t->lock);
			dev_err_ratelimited(npu->dev,
					    "register write at 0x%x dropped: the server does not drain the write log\n",
					    offset);
			return;
		}
		usleep_range(100, 200);
		waited += 100;
	}
	slot = t->tail % SABLE_IVSHMEM_WRITE_LOG;
	writel(offset, &t->regs->log[slot].offset);
	writel(value, &t->regs->log[slot].value);
	t->tail++;
	writel(t->tail, &t->regs->write_tail);
	writel(t->doorbell_value, t->doorbell);
	mutex_unlock(&t->lock);
}

/* QEMU's ivshmem-doorbell: BAR0 ivshmem's registers, BAR2 the server's shared memory. */
static int sable_pci_map_ivshmem(struct pci_dev *pdev, struct sable_npu *npu)
{
	struct device *dev = &pdev->dev;
	const resource_size_t bar2 = pci_resource_start(pdev, SABLE_PCI_BAR_MEMORY);
	const resource_size_t bar2_size = pci_resource_len(pdev, SABLE_PCI_BAR_MEMORY);
	struct sable_ivshmem *t;
	void __iomem *area;
	u32 magic, version, peer;
	u64 memory_bytes;

	if (bar2_size < SABLE_IVSHMEM_REG_AREA_BYTES + SABLE_PCI_MIN_MEMORY)
		return dev_err_probe(dev, -ENODEV, "ivshmem BAR2 of %llu bytes is too small\n",
				     (u64)bar2_size);
	t = devm_kzalloc(dev, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	mutex_init(&t->lock);
	t->doorbell = devm_ioremap(dev, pci_resource_start(pdev, 0) + SABLE_IVSHMEM_REG_DOORBELL,
				   sizeof(u32));
	area = devm_ioremap(dev, bar2 + bar2_size - SABLE_IVSHMEM_REG_AREA_BYTES,
			    SABLE_IVSHMEM_REG_AREA_BYTES);
	if (!t->doorbell || !area)
		return dev_err_probe(dev, -ENOMEM, "cannot map the ivshmem registers\n");
	t->regs = area;
	magic = readl(&t->regs->magic);
	version = readl(&t->regs->version);
	if (magic != SABLE_IVSHMEM_MAGIC || version != SABLE_IVSHMEM_VERSION)
		return dev_err_probe(dev, -ENODEV,
				     "no sable-simd behind this ivshmem device (magic 0x%08x, version %u)\n",
				     magic, version);
	peer = readl(&t->regs->server_peer);
	memory_bytes = readq(&t->regs->memory_bytes);
	if (peer > 0xffff || memory_bytes < SABLE_PCI_MIN_MEMORY ||
	    memory_bytes > bar2_size - SABLE_IVSHMEM_REG_AREA_BYTES ||
	    memory_bytes > SABLE_FW_DEVICE_MEMORY_LIMIT || !PAGE_ALIGNED(memory_bytes))
		return dev_err_probe(dev, -ENODEV,
				     "the register area is inconsistent (server peer %u, %llu bytes of memory)\n",
				     peer, memory_bytes);
	t->doorbell_value = peer << 16;
	/* Continue the log where a previous load of the module left it. */
	t->tail = readl(&t->regs->write_tail);

	npu->transport = t;
	npu->write_register = sable_ivshmem_write;
	npu->backend = "ivshmem";
	npu->csr = area + SABLE_IVSHMEM_REG_CSR;
	npu->csr_size = SABLE_PCI_BAR0_WINDOW;
	npu->hostif = area + SABLE_IVSHMEM_REG_HOSTIF;
	npu->hostif_size = SABLE_PCI_BAR0_WINDOW;
	/* The shared memory is the host's RAM, which QEMU and sable-simd see coherently. */
	npu->memory_phys = bar2;
	npu->memory_size = memory_bytes;
	npu->memory_coherent = true;
	return 0;
}

/* A card: BAR0 the register windows, BAR2 the device memory (write-combined, not coherent). */
static int sable_pci_map_card(struct pci_dev *pdev, struct sable_npu *npu)
{
	struct device *dev = &pdev->dev;

	if (pci_resource_len(pdev, SABLE_PCI_BAR_REGISTERS) < SABLE_PCI_BAR0_BYTES)
		return dev_err_probe(dev, -ENODEV, "BAR0 is smaller than %u bytes\n",
				     SABLE_PCI_BAR0_BYTES);
	if (!(pci_resource_flags(pdev, SABLE_PCI_BAR_MEMORY) & IORESOURCE_MEM_64))
		return dev_err_probe(dev, -ENODEV, "BAR2 is not a 64-bit memory BAR\n");
	npu->csr = devm_ioremap(dev, pci_resource_start(pdev, SABLE_PCI_BAR_REGISTERS),
				SABLE_PCI_BAR0_BYTES);
	if (!npu->csr)
		return dev_err_probe(dev, -ENOMEM, "cannot map BAR0\n");
	npu->csr_size = SABLE_PCI_BAR0_WINDOW;
	npu->hostif = npu->csr + SABLE_PCI_BAR0_HOSTIF;
	npu->hostif_size = SABLE_PCI_BAR0_WINDOW;
	npu->backend = "pcie";
	npu->memory_phys = pci_resource_start(pdev, SABLE_PCI_BAR_MEMORY);
	npu->memory_size = min_t(u64, pci_resource_len(pdev, SABLE_PCI_BAR_MEMORY),
				 SABLE_FW_DEVICE_MEMORY_LIMIT);
	npu->memory_coherent = false;
	return 0;
}

static int sable_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	const bool transport = pdev->vendor == SABLE_IVSHMEM_VENDOR_ID &&
			       pdev->device == SABLE_IVSHMEM_DEVICE_ID;
	struct device *dev = &pdev->dev;
	struct sable_npu *npu;
	int err;

	/* driver_override can point any device at this driver. */
	if (!transport && !(pdev->vendor == SABLE_PCI_VENDOR_ID &&
			    pdev->device == SABLE_PCI_DEVICE_ID))
		return -ENODEV;
	npu = sable_npu_alloc(dev);
	if (!npu)
		return -ENOMEM;
	err = pcim_enable_device(pdev);
	if (err)
		return dev_err_probe(dev, err, "cannot enable the device\n");
	err = pci_request_regions(pdev, "sable-npu");
	if (err)
		return dev_err_probe(dev, err, "the BARs are in use\n");
	err = transport ? sable_pci_map_ivshmem(pdev, npu) : sable_pci_map_card(pdev, npu);
	if (err)
		return err;
	npu->memory = devm_memremap(dev, npu->memory_phys, npu->memory_size,
				    npu->memory_coherent ? MEMREMAP_WB : MEMREMAP_WC);
	if (IS_ERR(npu->memory))
		return dev_err_probe(dev, PTR_ERR(npu->memory), "cannot map the device memory\n");
	pci_set_master(pdev);
	err = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX);
	if (err < 0)
		return dev_err_probe(dev, err, "no MSI-X vector 0: the host interrupt\n");
	npu->irq = pci_irq_vector(pdev, 0);
	pci_set_drvdata(pdev, npu);
	return sable_npu_probe(npu);
}

static const struct pci_device_id sable_pci_ids[] = {
	{ PCI_DEVICE(SABLE_PCI_VENDOR_ID, SABLE_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, sable_pci_ids);

static struct pci_driver sable_pci_driver = {
	.name = "sable-npu",
	.id_table = sable_pci_ids,
	.probe = sable_pci_probe,
};

int sable_pci_register(void)
{
	int err;

	err = pci_register_driver(&sable_pci_driver);
	if (err || !ivshmem)
		return err;
	err = pci_add_dynid(&sable_pci_driver, SABLE_IVSHMEM_VENDOR_ID, SABLE_IVSHMEM_DEVICE_ID,
			    PCI_ANY_ID, PCI_ANY_ID, 0, 0, 0);
	if (err)
		pci_unregister_driver(&sable_pci_driver);
	return err;
}

void sable_pci_unregister(void)
{
	pci_unregister_driver(&sable_pci_driver);
}
